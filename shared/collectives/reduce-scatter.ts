// Ring reduce-scatter, frame by frame. Step k: send segment r-k-1, receive segment r-k-2 and add this rank's
// own copy of it; the last step (N-2) receives segment r, fully reduced.
import { bytesPerElement, dtypeOf, type Elems } from '../tensor/dtype.js';
import type { BufferPool } from '../transport/buffer-pool.js';
import { payloadAsBf16, payloadAsF32 } from '../transport/frame.js';
import { mod, type Chunks } from './chunks.js';
import type { Phase } from './exchange.js';

/** Where this rank stands, and what its phases draw on. */
export interface RingSeat {
  rank: number;
  world: number;
  pool: BufferPool; // the incoming link's receive buffers
  /** Account a staging copy; the callback frees it once the socket has written it. */
  stage<T extends Elems>(x: T): [T, () => void];
}

/** A received payload as elements of its dtype, in place where alignment allows. */
export function payloadView(like: Elems, p: Uint8Array): Elems {
  return dtypeOf(like) === 'fp32' ? payloadAsF32(p) : payloadAsBf16(p);
}

/** Copy elements [from, from+n) of `src` as wire bytes, zero beyond `src.length` (the padding). */
function padSlice(src: Elems, from: number, n: number): Elems {
  const end = Math.min(src.length, from + n);
  const out = src instanceof Float32Array ? new Float32Array(n) : new Uint16Array(n);
  if (end > from) out.set(src.subarray(from, end) as never);
  return out;
}

/** acc[i] += src[from + i] for the part inside src (beyond it the padding adds zero); bf16 sums are taken in
 *  fp32 and rounded once. `acc` and `src` have the same dtype. */
function addInto(pool: BufferPool, acc: Elems, src: Elems, from: number): void {
  const n = Math.max(0, Math.min(acc.length, src.length - from));
  if (acc instanceof Float32Array) pool.addInto(acc, (src as Float32Array).subarray(from, from + n), n);
  else pool.addBf16Into(acc, (src as Uint16Array).subarray(from, from + n), n);
}

/**
 * Received chunks land in pooled buffers, are summed in place and forwarded, or at the last step written to
 * `output` (then `reduced(chunk)` is told). `output` may alias `input`'s own segment.
 */
export function reduceScatterPhase(seat: RingSeat, input: Elems, output: Elems, chunks: Chunks, reduced?: (chunk: number) => void): Phase {
  const { rank: r, world: N, pool } = seat;
  const L = input.length;
  const S = chunks.segment;
  return {
    start: (send) => {
      const seg = mod(r - 1, N);
      for (let j = 0; j < chunks.count; j++) {
        const from = seg * S + chunks.start(j);
        const n = chunks.length(j);
        if (from + n <= L) send(0, j, input.subarray(from, from + n));
        else send(0, j, ...seat.stage(padSlice(input, from, n)));
      }
    },
    frame: (f, send) => {
      const seg = mod(r - f.step - 2, N);
      const a = chunks.start(f.chunk);
      const acc = payloadView(input, f.payload); // the received chunk is ours: reduce into it in place
      addInto(pool, acc, input, seg * S + a);
      if (f.step < N - 2) return send(f.step + 1, f.chunk, acc, () => pool.give(f.payload));
      output.set(acc as never, a);
      pool.give(f.payload);
      reduced?.(f.chunk);
    },
    destination: (h) => pool.take(h.elements * bytesPerElement(h.dtype)),
  };
}
