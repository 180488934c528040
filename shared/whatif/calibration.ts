// The GPU model against measurements: each calibration row (test/fixtures/gpu/h200.jsonl, one JSON object a
// line) predicted, and the model's constants fitted on the rows given. The H200 preset is fitted on the
// calibration rows: the sweep rows (gpt-dD) for five constants, and the gpt2-xl recompute row for the
// checkpoint's host cost (no sweep row checkpoints). Every other row (real model widths, the 7B recompute
// row, the head, Adam) is its test.
import { DEVICES } from './devices.js';
import { GpuCost, type Efficiencies } from './gpu-cost.js';
import { adamWork, blockWork, headWork } from './model-work.js';
import { nelderMead } from './nelder-mead.js';

export interface CalibrationRow {
  what: string;
  name?: string;
  D?: number;
  B?: number;
  T?: number;
  V?: number;
  n?: number;
  recompute?: boolean;
  fwd_ms?: number | null;
  step_ms?: number;
  flops_dense?: number;
  flops?: number;
}

/** One measured time of a row beside the model's. */
export interface Comparison {
  row: string; // e.g. "gpt-7b B1 T4096 step"
  measuredMs: number;
  modeledMs: number;
  flops: number; // the row's FLOPs (dense counting), for the tolerance
}

/** The model's figure for every time a row measured: a block's step (and forward), the head's step, Adam. */
export function compare(cost: GpuCost, r: CalibrationRow): Comparison[] {
  const label = `${r.name ?? r.what}${r.B ? ` B${r.B} T${r.T}` : ''}${r.recompute ? ' recompute' : ''}`;
  if (r.what === 'block') {
    const [D, T, B] = [r.D!, r.T!, r.B!];
    const fwd = blockWork(D, T, B, 'forward');
    const bwd = blockWork(D, T, B, 'backward');
    const flops = r.flops_dense!;
    // Checkpointed: the forward runs, then the backward pass runs it again before its own kernels.
    const step = r.recompute ? cost.chainMs(fwd, fwd, bwd, { kernels: 0, flops: 0, bytes: 0, hostMs: cost.eff.recomputeHostMs }) : cost.chainMs(fwd, bwd);
    const out = [{ row: `${label} step`, measuredMs: r.step_ms!, modeledMs: step, flops }];
    if (r.fwd_ms) out.push({ row: `${label} forward`, measuredMs: r.fwd_ms, modeledMs: cost.chainMs(fwd), flops: flops / 3 });
    return out;
  }
  if (r.what === 'head') {
    const tokens = r.B! * r.T!;
    return [
      {
        row: `${label} step`,
        measuredMs: r.step_ms!,
        modeledMs: cost.chainMs(headWork(r.D!, r.V!, tokens, 'forward'), headWork(r.D!, r.V!, tokens, 'backward')),
        flops: r.flops!,
      },
    ];
  }
  if (r.what === 'adam') return [{ row: `adam ${r.n} params`, measuredMs: r.step_ms!, modeledMs: cost.chainMs(adamWork(r.n!, 4, 0)), flops: 0 }];
  return [];
}

export const isSweepRow = (r: CalibrationRow) => r.what === 'block' && /^gpt-d\d+$/.test(r.name ?? '');

/** The checkpointed row `recomputeHostMs` is read off: host-bound, so its time past the recomputed forward's
 *  kernels is the checkpoint's own bookkeeping. */
export const isRecomputeCalibrationRow = (r: CalibrationRow) => r.what === 'block' && r.recompute === true && r.name === 'gpt2-xl';

/** The rows the preset is fitted on; the rest test it. */
export const isCalibrationRow = (r: CalibrationRow) => isSweepRow(r) || isRecomputeCalibrationRow(r);

/** `recomputeHostMs` from a checkpointed row: the host term at which the model gives its measured step (the
 *  step grows with it, blended with the GPU's time, so it is solved for by bisection). */
export function fitRecomputeHostMs(row: CalibrationRow, eff: Efficiencies): number {
  const step = (h: number) => compare(new GpuCost(DEVICES[0], { ...eff, recomputeHostMs: h }), row)[0];
  let [lo, hi] = [0, row.step_ms!];
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (step(mid).modeledMs < row.step_ms!) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Constants minimizing the squared log error over the rows' times. `recomputeHostMs` is kept as given:
 *  no sweep row checkpoints (fitRecomputeHostMs reads it off its own calibration row). */
export function fitEfficiencies(rows: CalibrationRow[], start: Efficiencies): Efficiencies {
  const device = DEVICES[0];
  const keys = ['gemm', 'memory', 'hostUsPerKernel', 'gpuUsPerKernel', 'blend'] as const;
  const from = (x: number[]): Efficiencies => ({ ...start, ...Object.fromEntries(keys.map((k, i) => [k, Math.exp(x[i])])) });
  const loss = (x: number[]) => {
    const cost = new GpuCost(device, from(x));
    const errors = rows.flatMap((r) => compare(cost, r)).map((c) => Math.log(c.modeledMs / c.measuredMs) ** 2);
    return errors.reduce((a, b) => a + b, 0) / errors.length;
  };
  return from(
    nelderMead(
      loss,
      keys.map((k) => Math.log(start[k])),
      { iterations: 20000, scale: 0.2, tolerance: 1e-14 },
    ),
  );
}
