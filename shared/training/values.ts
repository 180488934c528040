// What the schemes do with values: widen and narrow between fp32 and the working dtype, add gradients, step
// Adam. One interface, two implementations chosen where a rank is assembled (rank/assembly.ts): these, on
// real arrays, and a what-if rank's (shared/whatif/no-values.ts), whose bands hold no values.
import { addF32, fromF32, toF32 } from '../tensor/convert.js';
import type { Elems } from '../tensor/dtype.js';
import { Quantizer, type QuantError, type QuantFormat } from '../tensor/quantize.js';
import { adamUpdate, type AdamHyper } from './adam.js';

export type { QuantError } from '../tensor/quantize.js';

export const noQuantError = (): QuantError => ({ sumErr: 0, sumAbs: 0, maxErr: 0, maxAbs: 0 });

export interface Values {
  /** dst = fp32(src); returns dst. */
  toF32(src: Elems, dst: Float32Array): Float32Array;
  /** dst = src in dst's dtype (bf16: rounded to nearest even). */
  fromF32(src: Float32Array, dst: Elems): void;
  /** acc += x. */
  addF32(acc: Float32Array, x: Float32Array): void;
  /** One Adam update of `param`, `m`, `v` with gradient `g` at step t (1-based). */
  adam(param: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array, t: number, h: AdamHyper): void;
  /** `x` (the working dtype) block-quantized into `out` (tensor/quantize.ts's wire layout, as 16-bit units);
   *  what it lost added to `err`. */
  quantize(x: Elems, f: QuantFormat, out: Uint16Array, err: QuantError): void;
  /** `parts` segments quantized one after another (each `q.length / parts` units) back into `out`'s equal parts. */
  dequantizeEach(q: Uint16Array, f: QuantFormat, out: Elems, parts: number): void;
  /** For each k < count with an `out(k)`: `part(k)` quantized into it; what it lost added to `err`. */
  quantizeEach(count: number, part: (k: number) => Elems, out: Slot, f: QuantFormat, err: QuantError): void;
  /** For each k < count with a `got(k)`: it dequantized (through fp32 `scratch`) and added into `acc`. */
  dequantizeAddEach(count: number, got: Slot, f: QuantFormat, scratch: Float32Array, acc: Float32Array): void;
  /** `dst` (count·size) = fp32 of `src`'s size-value parts first, first + stride, ... (count of them). */
  toF32Strided(src: Elems, first: number, stride: number, count: number, dst: Float32Array): Float32Array;
}
// The *Each and strided forms exist so that a rank without values (no-values.ts) skips the loop itself: a
// 128-host exchange loops over 127 peers, and views of nothing cost a simulated thousand ranks seconds. For the
// same reason the quantized slots are made on demand (a Slot), not as an array of views.

/** The quantized segment for peer k (a view made on demand), or null where there is none (this rank's own). */
type Slot = (k: number) => Uint16Array | null;

let quantizer: Quantizer | null = null; // made on first use: one per thread

// The quantizer reads the working dtype (bf16 bits or fp32) and writes it back itself: no fp32 copy in between.
function quantize(x: Elems, f: QuantFormat, out: Uint16Array, err: QuantError): void {
  (quantizer ??= new Quantizer()).quantize(x, f, new Uint8Array(out.buffer, out.byteOffset, out.byteLength), err);
}

function dequantize(q: Uint16Array, f: QuantFormat, out: Elems): void {
  (quantizer ??= new Quantizer()).dequantize(new Uint8Array(q.buffer, q.byteOffset, q.byteLength), out.length, f, out);
}

function dequantizeEach(q: Uint16Array, f: QuantFormat, out: Elems, parts: number): void {
  const [Q, S] = [q.length / parts, out.length / parts];
  for (let r = 0; r < parts; r++) dequantize(q.subarray(r * Q, (r + 1) * Q), f, out.subarray(r * S, (r + 1) * S));
}

function quantizeEach(count: number, part: (k: number) => Elems, out: Slot, f: QuantFormat, err: QuantError): void {
  for (let k = 0; k < count; k++) {
    const o = out(k);
    if (o) quantize(part(k), f, o, err);
  }
}

function dequantizeAddEach(count: number, got: Slot, f: QuantFormat, scratch: Float32Array, acc: Float32Array): void {
  for (let k = 0; k < count; k++) {
    const g = got(k);
    if (!g) continue;
    dequantize(g, f, scratch);
    addF32(acc, scratch);
  }
}

function toF32Strided(src: Elems, first: number, stride: number, count: number, dst: Float32Array): Float32Array {
  const size = dst.length / count;
  for (let k = 0; k < count; k++) toF32(src.subarray((first + k * stride) * size, (first + k * stride + 1) * size), dst.subarray(k * size, (k + 1) * size));
  return dst;
}

export const REAL_VALUES: Values = {
  toF32,
  fromF32,
  addF32,
  adam: adamUpdate,
  quantize,
  dequantizeEach,
  quantizeEach,
  dequantizeAddEach,
  toF32Strided,
};
