// fp32 <-> the working dtype, for whole bands and units: with the SIMD kernels where both arrays live in one
// WebAssembly heap (heap.ts), with the JavaScript loops of bf16.ts otherwise. Both round alike (tested).
import { decodeBf16, encodeBf16 } from './bf16.js';
import type { Elems } from './dtype.js';
import { heapOf } from './heap.js';

/** dst = fp32(src) for src.length elements. */
export function toF32(src: Elems, dst: Float32Array): Float32Array {
  if (src instanceof Float32Array) dst.set(src);
  else {
    const h = heapOf(src, dst);
    if (h) h.k.widen_bf16(src.byteOffset, dst.byteOffset, src.length);
    else decodeBf16(src, dst);
  }
  return dst;
}

/** dst = src in dst's dtype (bf16: rounded to nearest even) for src.length elements. */
export function fromF32(src: Float32Array, dst: Elems): void {
  if (dst instanceof Float32Array) return dst.set(src);
  const h = heapOf(src, dst);
  if (h) h.k.narrow_bf16(src.byteOffset, dst.byteOffset, src.length);
  else encodeBf16(src, dst);
}
