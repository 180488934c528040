// How a segment of a collective is cut into chunks that are pipelined around the ring.
import { bytesPerElement, type Elems, type WireDtype } from '../tensor/dtype.js';

export const mod = (a: number, n: number) => ((a % n) + n) % n;

/** Chunking of one segment of S elements. */
export class Chunks {
  readonly size: number;
  readonly count: number;
  constructor(
    readonly segment: number,
    chunkBytes: number,
    readonly dtype: WireDtype,
  ) {
    this.size = Math.max(1, Math.floor(chunkBytes / bytesPerElement(dtype)));
    this.count = Math.ceil(segment / this.size);
  }
  start(j: number): number {
    return j * this.size;
  }
  length(j: number): number {
    return Math.min(this.segment, (j + 1) * this.size) - j * this.size;
  }
  /** Chunk j of a segment-sized array. */
  of<T extends Elems>(x: T, j: number): T {
    return x.subarray(this.start(j), this.start(j) + this.length(j)) as T;
  }
}
