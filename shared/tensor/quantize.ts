// Block quantization (ZeRO++'s qwZ and qgZ) on the SIMD kernels of wasm/quantize.wat: a segment of fp32 values
// becomes a scale per block and an int8 (or packed int4) code per value, laid out for the wire as
//   [scales: 4 bytes per block][codes: n bytes (int8) or ceil(n/2) (int4)][a zero byte if that is odd]
// so that a quantized segment travels in a ring frame as whole 16-bit units (quantizedElems of them).
import { instantiate } from './wasm/load.js';

export interface QuantFormat {
  bits: 4 | 8;
  block: number; // values per scale: a positive multiple of QUANT_BLOCK_MULTIPLE
}

/** The kernels read a vector of 16 codes at a time: blocks are whole vectors. */
export const QUANT_BLOCK_MULTIPLE = 16;

interface QuantKernels {
  quantize(x: number, n: number, block: number, qmax: number, q: number, s: number): void;
  dequantize(q: number, s: number, n: number, block: number, y: number): void;
  pack_int4(c: number, n: number, out: number): void;
  unpack_int4(p: number, n: number, c: number): void;
  widen(x: number, n: number, y: number): void;
  narrow(x: number, n: number, y: number): void;
  quant_error(x: number, q: number, s: number, n: number, block: number, out: number): void;
}

/** What quantizing lost, summed over what was quantized: |q - x| and |x|, their sums and largest. */
export interface QuantError {
  sumErr: number;
  sumAbs: number;
  maxErr: number;
  maxAbs: number;
}

const blocks = (n: number, f: QuantFormat) => Math.ceil(n / f.block);
const codeBytes = (n: number, f: QuantFormat) => (f.bits === 8 ? n : Math.ceil(n / 2));

/** Bytes a quantized segment of n values takes on the wire. */
export function quantizedBytes(n: number, f: QuantFormat): number {
  return 2 * Math.ceil((4 * blocks(n, f) + codeBytes(n, f)) / 2);
}

/** The same, in the 16-bit units a frame carries. */
export const quantizedElems = (n: number, f: QuantFormat): number => quantizedBytes(n, f) / 2;

const PAGE = 65536;

/** Quantizes and dequantizes in a WebAssembly memory of its own (values are copied in and out: the kernels'
 *  cost, not the copies', is what a GPU would spend, and the copies are small beside a unit's products). */
export class Quantizer {
  private readonly memory = new WebAssembly.Memory({ initial: 1 });
  private readonly k: QuantKernels;

  constructor() {
    const bound = instantiate<QuantKernels>('quantize', this.memory);
    if (!bound) throw new Error('quantization needs WebAssembly SIMD, which this JavaScript engine does not offer');
    this.k = bound.exports;
  }

  private room(bytes: number): void {
    const need = Math.ceil(bytes / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (need > 0) this.memory.grow(need);
  }

  /** `x` (fp32, or bf16 bits: widened here) quantized into `out` (quantizedBytes(x.length) bytes, as laid out
   *  above); what it lost added to `err`, if given. */
  quantize(x: Float32Array | Uint16Array, f: QuantFormat, out: Uint8Array, err?: QuantError): void {
    const n = x.length;
    const nb = blocks(n, f);
    const wire = quantizedBytes(n, f);
    if (out.length !== wire) throw new RangeError(`quantize: ${out.length} bytes for ${n} values, expected ${wire}`);
    // memory: the values as given | x (fp32) | codes (n, one a byte) | the wire layout | the error's four sums
    const xAt = align(x.byteLength);
    const codesAt = align(xAt + 4 * n);
    const wireAt = align(codesAt + n + 16);
    const errAt = align(wireAt + wire + 16);
    this.room(errAt + 16);
    if (x instanceof Float32Array) new Float32Array(this.memory.buffer, xAt, n).set(x);
    else {
      new Uint16Array(this.memory.buffer, 0, n).set(x);
      this.k.widen(0, n, xAt);
    }
    const codes = f.bits === 8 ? wireAt + 4 * nb : codesAt;
    this.k.quantize(xAt, n, f.block, f.bits === 8 ? 127 : 7, codes, wireAt);
    if (err) {
      const e = new Float32Array(this.memory.buffer, errAt, 4);
      e.set([err.sumErr, err.sumAbs, err.maxErr, err.maxAbs]);
      this.k.quant_error(xAt, codes, wireAt, n, f.block, errAt);
      [err.sumErr, err.sumAbs, err.maxErr, err.maxAbs] = e;
    }
    if (f.bits === 4) this.k.pack_int4(codesAt, n, wireAt + 4 * nb);
    const bytes = new Uint8Array(this.memory.buffer, wireAt, wire);
    bytes.fill(0, 4 * nb + codeBytes(n, f)); // the padding byte, if any
    out.set(bytes);
  }

  /** A quantized segment (as quantize wrote it) back into `out`: fp32, or bf16 bits rounded to nearest even. */
  dequantize(bytes: Uint8Array, n: number, f: QuantFormat, out: Float32Array | Uint16Array): void {
    const nb = blocks(n, f);
    if (bytes.length < 4 * nb + codeBytes(n, f)) throw new RangeError(`dequantize: ${bytes.length} bytes cannot hold ${n} values`);
    if (out.length !== n) throw new RangeError(`dequantize: ${out.length} outputs for ${n} values`);
    const wireAt = 0;
    const codesAt = align(bytes.length);
    const yAt = align(codesAt + n + 16);
    const bitsAt = align(yAt + 4 * n);
    this.room(bitsAt + 2 * n + 16);
    new Uint8Array(this.memory.buffer, wireAt, bytes.length).set(bytes);
    let codes = wireAt + 4 * nb;
    if (f.bits === 4) {
      this.k.unpack_int4(codes, n, codesAt);
      codes = codesAt;
    }
    this.k.dequantize(codes, wireAt, n, f.block, yAt);
    if (out instanceof Float32Array) return out.set(new Float32Array(this.memory.buffer, yAt, n));
    this.k.narrow(yAt, n, bitsAt);
    out.set(new Uint16Array(this.memory.buffer, bitsAt, n));
  }
}

const align = (bytes: number) => Math.ceil(bytes / 16) * 16;
