// Adam with torch.optim.Adam semantics (no weight decay, no amsgrad), on whatever slice a rank owns.
import { heapOf } from '../tensor/heap.js';

export interface AdamHyper {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
}

/** One update of `param`, `m`, `v` (fp32, same length) with gradient `g` at step t (1-based). */
export function adamUpdate(param: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array, t: number, h: AdamHyper): void {
  const bc1 = 1 - h.beta1 ** t;
  const bc2Sqrt = Math.sqrt(1 - h.beta2 ** t);
  const stepSize = h.lr / bc1;
  // In a WebAssembly heap (the ranks' model states): the SIMD kernel, the same arithmetic in fp32. 1 - beta is
  // taken here in double and rounded once, as torch.optim.Adam takes it; in fp32 from a rounded beta2 it
  // loses 1.3e-5 of itself.
  const heap = heapOf(param, m, v, g);
  if (heap)
    return heap.k.adam(
      param.byteOffset,
      m.byteOffset,
      v.byteOffset,
      g.byteOffset,
      param.length,
      h.beta1,
      1 - h.beta1,
      h.beta2,
      1 - h.beta2,
      stepSize,
      bc2Sqrt,
      h.eps,
    );
  for (let i = 0; i < param.length; i++) {
    const gi = g[i];
    const mi = (m[i] = h.beta1 * m[i] + (1 - h.beta1) * gi);
    const vi = (v[i] = h.beta2 * v[i] + (1 - h.beta2) * gi * gi);
    param[i] -= (stepSize * mi) / (Math.sqrt(vi) / bc2Sqrt + h.eps);
  }
}

/** Everything Adam carries from step to step (what a checkpoint saves). */
export interface OptimizerState {
  master: Float32Array;
  m: Float32Array;
  v: Float32Array;
  step: number; // Adam steps taken
}
