// GELU, LayerNorm and the attention's causal softmax, forward and backward, on the kernel arena's SIMD kernels (tensor/wasm/activations.wat)
// where the arrays live in the arena, in multiples of four elements; the JavaScript of ops.ts for the rest.
// In JavaScript, erf cost a GELU about 36 ns per element: 3 ms of an 18 ms DP step of the default MLP.
import type { KernelArena } from '../tensor/kernel-arena.js';
import { causalSoftmax, causalSoftmaxBackward, gelu, geluBackward, layerNorm, layerNormBackward } from './ops.js';

const inArena = (arena: KernelArena, ...xs: Float32Array[]) => xs.every((x) => x.buffer === arena.memory.buffer);

/** out = GELU(pre). */
export function arenaGelu(arena: KernelArena, pre: Float32Array, out: Float32Array): void {
  const n4 = inArena(arena, pre, out) ? pre.length & ~3 : 0;
  if (n4) arena.k.gelu(pre.byteOffset, out.byteOffset, n4);
  if (n4 < pre.length) gelu(pre.subarray(n4), out.subarray(n4));
}

/** g *= GELU'(pre), with `act` = GELU(pre) from the forward pass. */
export function arenaGeluBackward(arena: KernelArena, pre: Float32Array, act: Float32Array, g: Float32Array): void {
  const n4 = inArena(arena, pre, act, g) ? pre.length & ~3 : 0;
  if (n4) arena.k.gelu_backward(pre.byteOffset, act.byteOffset, g.byteOffset, n4);
  if (n4 < pre.length) geluBackward(pre.subarray(n4), act.subarray(n4), g.subarray(n4));
}

/** LayerNorm over N rows of D: out, and each row's mean and 1/std in `stats` (ops.ts's layerNorm's arguments). */
export function arenaLayerNorm(arena: KernelArena, ...a: Parameters<typeof layerNorm>): void {
  const [x, w, b, N, D, out, stats] = a;
  if (D % 4 === 0 && inArena(arena, x, w, b, out, stats)) arena.k.layer_norm(x.byteOffset, w.byteOffset, b.byteOffset, out.byteOffset, stats.byteOffset, N, D);
  else layerNorm(...a);
}

/** LayerNorm backward: dw and db accumulate, dx += the input's gradient (ops.ts's layerNormBackward's arguments). */
export function arenaLayerNormBackward(arena: KernelArena, ...a: Parameters<typeof layerNormBackward>): void {
  const [x, w, stats, dy, N, D, dw, db, dx] = a;
  if (D % 4 === 0 && inArena(arena, x, w, stats, dy, dw, db, dx))
    arena.k.layer_norm_backward(x.byteOffset, w.byteOffset, stats.byteOffset, dy.byteOffset, dw.byteOffset, db.byteOffset, dx.byteOffset, N, D);
  else layerNormBackward(...a);
}

/** A T x T block of attention scores into probabilities, causal, in place. */
export function arenaCausalSoftmax(arena: KernelArena, P: Float32Array, T: number, scale: number): void {
  if (inArena(arena, P)) arena.k.causal_softmax(P.byteOffset, T, scale);
  else causalSoftmax(P, T, scale);
}

/** dP into dS, in place, from the probabilities P. */
export function arenaCausalSoftmaxBackward(arena: KernelArena, P: Float32Array, dP: Float32Array, T: number, scale: number): void {
  if (inArena(arena, P, dP)) arena.k.causal_softmax_backward(P.byteOffset, dP.byteOffset, T, scale);
  else causalSoftmaxBackward(P, dP, T, scale);
}
