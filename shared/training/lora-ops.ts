// A Linear layer with or without its LoRA adapter, forward and backward, on a kernel arena: y = x·Wᵀ + b +
// s·(x·Aᵀ)·Bᵀ. The adapter keeps h = x·Aᵀ (rows × r) for its backward pass; a frozen weight (or bias) gets no
// gradient computed at all (PyTorch skips what does not require grad), while the input's gradient always
// flows. Every product runs in the arena's kernels (or its BLAS); the small scaled adds in JavaScript.
import type { KernelArena } from '../tensor/kernel-arena.js';
import type { Adapter } from './adapters.js';

/** Where a Linear's pieces are: regions by name, and W, b, A, B as element offsets in the loaded group 'p'
 *  (gradients at the same offsets in 'g'). `frozen`: the group's frozen prefix. */
export interface LinearCall {
  x: string; // input region (rows × inputs)
  w: number;
  b: number | null;
  rows: number;
  inputs: number;
  outputs: number;
  adapter?: Adapter;
  h?: string; // the adapter's kept x·Aᵀ region
  frozen: number;
}

/** The scratch an adapter's passes use: a product of the layer's output (or input) width, its r-wide
 *  gradient, and zeros for a missing bias. */
export const LORA_SCRATCH = ['lt', 'ldh', 'lzero'] as const;

/** out = x·Wᵀ + b (+ s·(x·Aᵀ)·Bᵀ). */
export function linearForward(a: KernelArena, c: LinearCall, out: string): void {
  const p = a.at('p');
  a.linearForward(a.at(c.x), p + 4 * c.w, c.b === null ? a.at('lzero') : p + 4 * c.b, a.at(out), c.rows, c.inputs, c.outputs);
  const ad = c.adapter;
  if (!ad) return;
  a.linearForward(a.at(c.x), p + 4 * ad.a, a.at('lzero'), a.at(c.h!), c.rows, c.inputs, ad.rank);
  a.linearForward(a.at(c.h!), p + 4 * ad.b, a.at('lzero'), a.at('lt'), c.rows, ad.rank, c.outputs);
  addScaled(a.f32(out, c.rows * c.outputs), a.f32('lt', c.rows * c.outputs), ad.scale);
}

/** The backward of linearForward: dW (and db) into 'g' unless frozen, the adapter's dA and dB, and
 *  dx = dy·W (+ s·(dy·B)·A) into `dx` (overwritten; null: the first layer, whose input needs none). */
export function linearBackward(a: KernelArena, c: LinearCall, dy: string, dx: string | null): void {
  const g = a.at('g');
  if (c.w >= c.frozen) a.matmulTN(a.at(dy), a.at(c.x), g + 4 * c.w, c.outputs, c.inputs, c.rows);
  if (c.b !== null && c.b >= c.frozen) a.k.colsum(a.at(dy), g + 4 * c.b, c.rows, c.outputs);
  if (dx !== null) a.matmulNN(a.at(dy), a.at('p') + 4 * c.w, a.at(dx), c.rows, c.inputs, c.outputs);
  const ad = c.adapter;
  if (!ad || (dx === null && ad.a < c.frozen)) return;
  const p = a.at('p');
  // dh = s·dy·B (rows × r); dB = s·dyᵀ·h = dyᵀ·(s·h); dA = dhᵀ·x; dx += dh·A
  a.matmulNN(a.at(dy), p + 4 * ad.b, a.at('ldh'), c.rows, ad.rank, c.outputs);
  const dh = a.f32('ldh', c.rows * ad.rank);
  for (let i = 0; i < dh.length; i++) dh[i] *= ad.scale;
  if (ad.a >= c.frozen) {
    a.matmulTN(a.at(dy), a.at(c.h!), g + 4 * ad.b, c.outputs, ad.rank, c.rows);
    const gb = a.f32('g', c.outputs * ad.rank, ad.b);
    for (let i = 0; i < gb.length; i++) gb[i] *= ad.scale;
    a.matmulTN(a.at('ldh'), a.at(c.x), g + 4 * ad.a, ad.rank, c.inputs, c.rows);
  }
  if (dx === null) return;
  a.matmulNN(a.at('ldh'), p + 4 * ad.a, a.at('lt'), c.rows, c.inputs, ad.rank);
  addScaled(a.f32(dx, c.rows * c.inputs), a.f32('lt', c.rows * c.inputs), 1);
}

function addScaled(into: Float32Array, x: Float32Array, s: number): void {
  for (let i = 0; i < into.length; i++) into[i] += s * x[i];
}

/** Scratch sizes for `rows` rows and these adapters (none: nothing but a bias's zeros). */
export function loraScratch(adapters: readonly Adapter[], rows: number, widest: number): Record<(typeof LORA_SCRATCH)[number], number> {
  const wide = Math.max(1, ...adapters.map((x) => Math.max(x.inputs, x.outputs)));
  const rank = Math.max(1, ...adapters.map((x) => x.rank));
  return { lt: adapters.length ? rows * wide : 1, ldh: adapters.length ? rows * rank : 1, lzero: Math.max(widest, wide, rank) };
}
