// Causal multi-head attention of a GPT block, forward and backward: per sequence and head, the products
// (q·kᵀ, P·v and their backward) and the causal softmax in the SIMD kernels on contiguous head slices.
import type { KernelArena } from '../../tensor/kernel-arena.js';
import { arenaCausalSoftmax, arenaCausalSoftmaxBackward } from '../../training/activations.js';
import type { GptShape } from './spec.js';
import type { BlockName, BlockRegion, GptRegion, GptViews } from './regions.js';

/** What the attention works on: the arena and its views, the model's shape, the batch's sequences. */
export interface AttentionHost {
  arena: KernelArena;
  v: GptViews;
  shape: GptShape;
  rows: number;
}

/** Copy head h of sequence s out of the rows of `src` (row stride `stride`, column `col`) into `dst`
 *  (T×hd, contiguous, as the kernels want it), or back when `back`. */
function headSlice(shape: GptShape, src: Float32Array, stride: number, col: number, dst: Float32Array, s: number, back = false): void {
  const { seq: T, dim: D, heads: H } = shape;
  const hd = D / H;
  for (let t = 0; t < T; t++) {
    const at = (s * T + t) * stride + col;
    if (back) for (let j = 0; j < hd; j++) src[at + j] = dst[t * hd + j];
    else for (let j = 0; j < hd; j++) dst[t * hd + j] = src[at + j];
  }
}

/** Causal multi-head attention of one block (its regions by `act`): per sequence and head, S = q·kᵀ and y = P·v in the SIMD
 *  kernels, P = softmax(S / sqrt(hd)) over u <= t. P is kept for the backward pass. */
export function attentionForward(host: AttentionHost, act: (name: BlockName) => BlockRegion): void {
  const { arena: ar, v, shape, rows } = host;
  const { seq: T, dim: D, heads: H } = shape;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const qkv = v[act('qkv')];
  const y = v[act('y')];
  const Pall = v[act('P')];
  const { hq, hk, hv, hy } = v;
  for (let s = 0; s < rows; s++)
    for (let h = 0; h < H; h++) {
      const base = (s * H + h) * T * T;
      headSlice(shape, qkv, 3 * D, h * hd, hq, s);
      headSlice(shape, qkv, 3 * D, D + h * hd, hk, s);
      headSlice(shape, qkv, 3 * D, 2 * D + h * hd, hv, s);
      const Pptr = ar.at(act('P')) + 4 * base;
      ar.linearForward(ar.at('hq'), ar.at('hk'), ar.at('zero'), Pptr, T, hd, T); // S = q·kᵀ
      arenaCausalSoftmax(ar, Pall.subarray(base, base + T * T), T, scale);
      ar.matmulNN(Pptr, ar.at('hv'), ar.at('hy'), T, hd, T); // y = P·v
      headSlice(shape, y, D, h * hd, hy, s, true);
    }
}

/** The backward of attentionForward(): region dx holds the gradient w.r.t. y; d3 gets it w.r.t. q, k, v. */
export function attentionBackward(host: AttentionHost, act: (name: BlockName) => BlockRegion): void {
  const { arena: ar, v, shape, rows } = host;
  const { seq: T, dim: D, heads: H } = shape;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const qkv = v[act('qkv')];
  const Pall = v[act('P')];
  const { dx: dy, d3: dqkv, hq, hk, hv, hdy, hdq, hdk, hdv, hdP } = v;
  const at = (name: GptRegion) => ar.at(name);
  for (let s = 0; s < rows; s++)
    for (let h = 0; h < H; h++) {
      const base = (s * H + h) * T * T;
      const Pptr = ar.at(act('P')) + 4 * base;
      headSlice(shape, qkv, 3 * D, h * hd, hq, s);
      headSlice(shape, qkv, 3 * D, D + h * hd, hk, s);
      headSlice(shape, qkv, 3 * D, 2 * D + h * hd, hv, s);
      headSlice(shape, dy, D, h * hd, hdy, s);
      ar.linearForward(at('hdy'), at('hv'), at('zero'), at('hdP'), T, hd, T); // dP = dy·vᵀ
      ar.matmulTN(Pptr, at('hdy'), at('hdv'), T, hd, T); // dv = Pᵀ·dy
      arenaCausalSoftmaxBackward(ar, Pall.subarray(base, base + T * T), hdP, T, scale); // dS
      ar.matmulNN(at('hdP'), at('hk'), at('hdq'), T, hd, T); // dq = dS·k
      ar.matmulTN(at('hdP'), at('hq'), at('hdk'), T, hd, T); // dk = dSᵀ·q
      headSlice(shape, dqkv, 3 * D, h * hd, hdq, s, true);
      headSlice(shape, dqkv, 3 * D, D + h * hd, hdk, s, true);
      headSlice(shape, dqkv, 3 * D, 2 * D + h * hd, hdv, s, true);
    }
}
