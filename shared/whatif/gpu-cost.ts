// What a piece of work costs on a modeled GPU. Three facts from the H200 measurements shape it:
// - Arithmetic: tensor-core FLOPs run at a fraction of the datasheet peak; the rest of a layer (norms,
//   activations, residual adds, casts, the optimizer) moves bytes through memory at a fraction of its bandwidth.
// - Launches: every kernel costs the GPU a few microseconds and the host (launch plus the framework's per-op
//   work) several times that. Below ~10^12 FLOPs a block's time is this host work, not arithmetic.
// - Overlap: the host launches ahead while the GPU executes, so a chain of kernels takes about the larger of
//   the two totals, not their sum. A smooth maximum (a power mean) stands for "larger", rounding the corner
//   where the two are close, as measured.
import type { Device } from './devices.js';

/** One piece of GPU work: kernels launched, tensor-core FLOPs, bytes moved through memory outside them, and
 *  any host work that is not per kernel. */
export interface Work {
  kernels: number;
  flops: number;
  bytes: number;
  hostMs?: number;
}

export const NO_WORK: Work = { kernels: 0, flops: 0, bytes: 0 };

export function addWork(...ws: Work[]): Work {
  return ws.reduce(
    (a, w) => ({ kernels: a.kernels + w.kernels, flops: a.flops + w.flops, bytes: a.bytes + w.bytes, hostMs: (a.hostMs ?? 0) + (w.hostMs ?? 0) }),
    NO_WORK,
  );
}

/** The fitted constants: device-independent fractions and per-kernel costs. */
export interface Efficiencies {
  gemm: number; // of the dense peak, for tensor-core FLOPs
  memory: number; // of the memory bandwidth, for bytes outside them
  hostUsPerKernel: number; // launch plus the framework's per-op work, on the host
  gpuUsPerKernel: number; // a kernel's fixed cost on the GPU (ramp-up, tail, scheduling)
  blend: number; // the power of the smooth maximum of host and GPU time
  recomputeHostMs: number; // per checkpointed block: the checkpoint's own host work in the backward pass
}

export class GpuCost {
  constructor(
    readonly device: Device,
    readonly eff: Efficiencies,
  ) {}

  /** Milliseconds the GPU is busy with `w`. */
  gpuMs(w: Work): number {
    const { gemm, memory, gpuUsPerKernel } = this.eff;
    return (
      (w.kernels * gpuUsPerKernel) / 1e3 + (w.flops / (this.device.peakTflops * 1e12 * gemm)) * 1e3 + (w.bytes / (this.device.memoryTBps * 1e12 * memory)) * 1e3
    );
  }

  /** Milliseconds the host spends launching `w`. */
  hostMs(w: Work): number {
    return (w.kernels * this.eff.hostUsPerKernel) / 1e3 + (w.hostMs ?? 0);
  }

  /** A chain of work launched back to back onto the GPU and waited for at its end: host and GPU overlap. */
  chainMs(...ws: Work[]): number {
    const w = addWork(...ws);
    return smoothMax(this.hostMs(w), this.gpuMs(w), this.eff.blend);
  }
}

function smoothMax(a: number, b: number, p: number): number {
  const m = Math.max(a, b);
  return m === 0 ? 0 : m * ((a / m) ** p + (b / m) ** p) ** (1 / p);
}
