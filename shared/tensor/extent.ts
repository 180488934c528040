// An array of a size and a dtype that holds no values: what a what-if rank (--compute model:...) keeps in
// place of its bands, so that a 7B model's schedule runs here without its 100 GB. It answers the few calls
// the schemes make on a band (length, subarray, fill, set) and does nothing with values. What works on values
// is chosen once, where the rank is assembled: synthetic frames (whatif/synthetic-collectives.ts) and no
// conversions or Adam (whatif/no-values.ts) go with these bands.
// It poses as an Elems only where a modeled ledger hands it out (memory-ledger.ts); dtype.ts's isExtent and
// dtypeOf are the one place that tells it from values: never ask instanceof of a band.
import { bytesPerElement, type Elems, type WireDtype } from './dtype.js';

class Extent {
  readonly BYTES_PER_ELEMENT: number;
  readonly byteOffset = 0;

  constructor(
    readonly length: number,
    readonly dtype: WireDtype,
  ) {
    this.BYTES_PER_ELEMENT = bytesPerElement(dtype);
  }

  get byteLength(): number {
    return this.length * this.BYTES_PER_ELEMENT;
  }

  subarray(begin = 0, end = this.length): Extent {
    const clamp = (i: number) => Math.max(0, Math.min(this.length, i < 0 ? this.length + i : i));
    return new Extent(Math.max(0, clamp(end) - clamp(begin)), this.dtype);
  }

  fill(): this {
    return this;
  }

  set(): void {}
}

/** A band without values, typed as the array it stands for. */
export function extentOf(dtype: 'fp32', n: number): Float32Array;
export function extentOf(dtype: WireDtype, n: number): Elems;
export function extentOf(dtype: WireDtype, n: number): Elems {
  return new Extent(n, dtype) as unknown as Elems;
}
