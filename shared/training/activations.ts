// GELU forward and backward on the kernel arena's SIMD kernels (tensor/wasm/activations.wat) where the arrays
// live in the arena, in multiples of four elements; the JavaScript of ops.ts for the rest. In JavaScript, erf
// cost a GELU about 36 ns per element: 3 ms of a 20 ms DP step of the default MLP.
import type { KernelArena } from '../tensor/kernel-arena.js';
import { gelu, geluBackward } from './ops.js';

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
