// What the schemes do with values: widen and narrow between fp32 and the working dtype, add gradients, step
// Adam. One interface, two implementations chosen where a rank is assembled (rank/assembly.ts): these, on
// real arrays, and a what-if rank's (shared/whatif/no-values.ts), whose bands hold no values.
import { addF32, fromF32, toF32 } from '../tensor/convert.js';
import type { Elems } from '../tensor/dtype.js';
import { Quantizer, type QuantFormat } from '../tensor/quantize.js';
import { adamUpdate, type AdamHyper } from './adam.js';

/** What quantizing lost, summed over what was quantized: |q - x| and |x|, their sums and largest. */
export interface QuantError {
  sumErr: number;
  sumAbs: number;
  maxErr: number;
  maxAbs: number;
}

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
  /** A quantized segment of `out.length` values back, into the working dtype. */
  dequantize(q: Uint16Array, f: QuantFormat, out: Elems): void;
}

let quantizer: Quantizer | null = null; // made on first use: one per thread

function quantize(x: Elems, f: QuantFormat, out: Uint16Array, err: QuantError): void {
  const q = (quantizer ??= new Quantizer());
  const wide = toF32(x, new Float32Array(x.length));
  const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  q.quantize(wide, f, bytes);
  const back = new Float32Array(x.length);
  q.dequantize(bytes, x.length, f, back);
  for (let i = 0; i < wide.length; i++) {
    const e = Math.abs(back[i] - wide[i]);
    const a = Math.abs(wide[i]);
    err.sumErr += e;
    err.sumAbs += a;
    if (e > err.maxErr) err.maxErr = e;
    if (a > err.maxAbs) err.maxAbs = a;
  }
}

function dequantize(q: Uint16Array, f: QuantFormat, out: Elems): void {
  const back = new Float32Array(out.length);
  (quantizer ??= new Quantizer()).dequantize(new Uint8Array(q.buffer, q.byteOffset, q.byteLength), out.length, f, back);
  fromF32(back, out);
}

export const REAL_VALUES: Values = { toF32, fromF32, addF32, adam: adamUpdate, quantize, dequantize };
