// What the schemes do with values: widen and narrow between fp32 and the working dtype, add gradients, step
// Adam. One interface, two implementations chosen where a rank is assembled (rank/assembly.ts): these, on
// real arrays, and a what-if rank's (shared/whatif/no-values.ts), whose bands hold no values.
import { addF32, fromF32, toF32 } from '../tensor/convert.js';
import type { Elems } from '../tensor/dtype.js';
import { adamUpdate, type AdamHyper } from './adam.js';

export interface Values {
  /** dst = fp32(src); returns dst. */
  toF32(src: Elems, dst: Float32Array): Float32Array;
  /** dst = src in dst's dtype (bf16: rounded to nearest even). */
  fromF32(src: Float32Array, dst: Elems): void;
  /** acc += x. */
  addF32(acc: Float32Array, x: Float32Array): void;
  /** One Adam update of `param`, `m`, `v` with gradient `g` at step t (1-based). */
  adam(param: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array, t: number, h: AdamHyper): void;
}

export const REAL_VALUES: Values = { toF32, fromF32, addF32, adam: adamUpdate };
