// The model a preset runs: its datasheet figures with the constants fitted on the H200's sweep rows
// (calibration.ts, fitEfficiencies; test/shared/whatif/calibration.test.ts refits them and holds them
// against the named rows). Other devices share the fraction of peak and bandwidth they reach and the host's
// per-kernel cost: an assumption, stated in docs/what-if.md.
import { modeledDevice, type RunConfig } from '../control/run-config.js';
import { deviceNamed, type Device } from './devices.js';
import { GpuCost, type Efficiencies } from './gpu-cost.js';

export const H200_FIT: Efficiencies = {
  gemm: 0.7543,
  memory: 0.7755,
  hostUsPerKernel: 29.5,
  gpuUsPerKernel: 4.948,
  blend: 6.256,
  // No sweep row checkpoints: fitted on a calibration row of its own (calibration.ts, fitRecomputeHostMs), the
  // gpt2-xl B4 recompute row, host-bound (3.97 ms checkpointed vs 2.12 ms not): torch.utils.checkpoint's
  // per-block bookkeeping on the host. That row then tests nothing; the 7B recompute row does.
  recomputeHostMs: 1.8,
};

/** The cost model of `--compute model:NAME`. */
export function presetCost(name: string): GpuCost {
  return new GpuCost(deviceNamed(name), H200_FIT);
}

/** A run's modeled device: the preset, with --tflops for its dense peak and --mfu for the fraction of it the
 *  products reach, when given (any device: the preset's memory, bandwidth and host figures stay). */
export function runDevice(c: Pick<RunConfig, 'compute' | 'tflops' | 'mfu' | 'device'>): { device: Device; cost: GpuCost } {
  const name = modeledDevice(c);
  if (!name) throw new Error(`compute ${c.compute} is not modeled`);
  const preset = c.device ?? deviceNamed(name); // a datasheet's (--device), or the preset's
  const device: Device =
    c.tflops === undefined && c.mfu === undefined
      ? preset
      : {
          ...preset,
          peakTflops: c.tflops ?? preset.peakTflops,
          title: `${preset.title} with ${[c.tflops !== undefined && `a ${c.tflops} TFLOPS peak`, c.mfu !== undefined && `products at ${c.mfu} of it`].filter(Boolean).join(' and ')} (given)`,
        };
  return { device, cost: new GpuCost(device, { ...H200_FIT, gemm: c.mfu ?? H200_FIT.gemm }) };
}
