// What the schemes should cost, from the seed's accounting: bytes per band and bytes sent per step.
// Everything is computed over the padded layout so it can be compared with measured counters exactly.
import { bytesPerElement, type WireDtype } from './dtype.js';

export interface SchemeFlags {
  shardOptimizer: boolean;
  shardGradients: boolean;
  shardParameters: boolean;
}

/** Sizes that the theory needs; a ShardLayout provides them, and `plan` builds them from a bare count. */
export interface LayoutSizes {
  params: number; // unpadded
  paddedTotal: number; // full-size buffers
  shardTotal: number; // one rank's shard
  maxUnitPadded: number; // the largest unit (one gather, one gradient bucket)
  unitPadded: number[]; // every unit, padded
  world: number;
}

export const OPTIMIZER_BYTES = { master: 4, m: 4, v: 4 } as const;

export interface MemoryTheory {
  bands: { params16: number; grads: number; master: number; m: number; v: number };
  resident: number; // between steps
  transient: number; // what the worst moment inside a step adds
  transientBand: 'gathered' | 'bucket' | null;
  peak: number;
}

export function memoryTheory(f: SchemeFlags, s: LayoutSizes, dtype: WireDtype, prefetch = 0): MemoryTheory {
  const b = bytesPerElement(dtype);
  const n = (sharded: boolean) => (sharded ? s.shardTotal : s.paddedTotal);
  const bands = {
    params16: n(f.shardParameters) * b,
    grads: n(f.shardGradients) * b,
    master: n(f.shardOptimizer) * OPTIMIZER_BYTES.master,
    m: n(f.shardOptimizer) * OPTIMIZER_BYTES.m,
    v: n(f.shardOptimizer) * OPTIMIZER_BYTES.v,
  };
  const resident = bands.params16 + bands.grads + bands.master + bands.m + bands.v;
  // ZeRO-3 holds one gathered unit while it computes (released before the unit's gradient is bucketed),
  // plus the `prefetch` units gathered ahead of it: the worst window of consecutive units.
  // ZeRO-2 holds one unit's full gradient until its reduce-scatter ends. DP and ZeRO-1 never hold more.
  const transientBand = f.shardParameters ? 'gathered' : f.shardGradients ? 'bucket' : null;
  const transient = f.shardParameters ? worstWindow(s.unitPadded, prefetch + 1) * b : f.shardGradients ? s.maxUnitPadded * b : 0;
  return { bands, resident, transient, transientBand, peak: resident + transient };
}

/** Largest sum of `width` consecutive entries (the whole list when it is shorter). */
function worstWindow(xs: number[], width: number): number {
  let best = 0;
  for (let i = 0; i < xs.length; i++) best = Math.max(best, xs.slice(i, i + width).reduce((a, x) => a + x, 0));
  return best;
}

/** Payload bytes one rank sends per step: DP, ZeRO-1/2 2(N-1)/N * P * b; ZeRO-3 3(N-1)/N * P * b. */
export function trafficTheory(f: SchemeFlags, s: LayoutSizes, dtype: WireDtype): number {
  const passes = f.shardParameters ? 3 : 2; // ZeRO-3: gather for forward, gather again for backward, reduce-scatter
  const perPass = s.unitPadded.reduce((t, p) => t + ((s.world - 1) / s.world) * p, 0);
  return passes * perPass * bytesPerElement(dtype);
}

/** Sizes for a model of `params` parameters in one unit, without padding (for `plan`). */
export function bareSizes(params: number, world: number): LayoutSizes {
  return { params, paddedTotal: params, shardTotal: params / world, maxUnitPadded: params, unitPadded: [params], world };
}
