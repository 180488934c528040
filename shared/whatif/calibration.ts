// The GPU model against measurements: each calibration row (test/fixtures/gpu/h200.jsonl, one JSON object a
// line) predicted, and the model's constants fitted on the rows given. The H200 preset is fitted on the
// sweep rows (gpt-dD) only; the named rows (real model widths, recompute, the head, Adam) are its test.
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

/** Constants minimizing the squared log error over the rows' times. `recomputeHostMs` is kept as given:
 *  no sweep row checkpoints (docs/what-if.md says where its value comes from). */
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
