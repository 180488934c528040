// fp32 <-> the working dtype, for whole bands and units: with the SIMD kernels where both arrays live in one
// WebAssembly heap (heap.ts), with the JavaScript loops of bf16.ts otherwise. Both round alike (tested).
import { decodeBf16, encodeBf16 } from './bf16.js';
import { addLoop } from './simd-kernels.js';
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

/** acc += x, elementwise (fp32, same length): the ring's SIMD add where both live in one heap, the loop for
 *  the rest (the kernel takes multiples of 4). Bit for bit the same either way. */
export function addF32(acc: Float32Array, x: Float32Array): void {
  const h = heapOf(acc, x);
  const whole = h ? x.length - (x.length % 4) : 0;
  if (whole) h!.k.add(acc.byteOffset, x.byteOffset, whole);
  addLoop(acc, x, whole, x.length);
}
