// Ring all-gather, frame by frame. Step k: receive segment r-k-1 and pass it on unchanged at step k+1.
import { bytesOf, type Elems } from '../tensor/dtype.js';
import type { ChunkHeader } from '../transport/frame.js';
import { mod, type Chunks } from './chunks.js';
import type { Phase } from './exchange.js';
import { payloadView, type RingSeat } from './reduce-scatter.js';

/** Whether `data` already is `target` from element `at` on (a payload that was read in place). */
function isViewOf(data: Elems, target: Elems, at: number): boolean {
  return data.buffer === target.buffer && data.byteOffset === target.byteOffset + at * target.BYTES_PER_ELEMENT;
}

/**
 * Chunks are read straight into their place in `output` where they fit whole (all but a cut-off last
 * segment), forwarded from there, and their buffer given back once the socket has written them. The first
 * step's sends are the caller's.
 */
export function allGatherPhase(seat: RingSeat, output: Elems, chunks: Chunks): Phase {
  const { rank: r, world: N, pool } = seat;
  const L = output.length;
  const S = chunks.segment;
  const at = (h: ChunkHeader) => mod(r - h.step - 1, N) * S + chunks.start(h.chunk);
  return {
    start: () => undefined,
    frame: (f, send) => {
      const data = payloadView(output, f.payload);
      // Not read in place: it arrived before this collective started, or does not fit whole (the padding
      // of a cut-off last segment is dropped).
      const n = Math.min(data.length, L - at(f));
      if (!isViewOf(data, output, at(f)) && n > 0) output.set(data.subarray(0, n) as never, at(f));
      const release = () => pool.give(f.payload); // a chunk read in place is the caller's memory: ignored
      if (f.step < N - 2) send(f.step + 1, f.chunk, data, release);
      else release();
    },
    destination: (h) => (at(h) + h.elements <= L ? bytesOf(output.subarray(at(h), at(h) + h.elements)) : null),
  };
}

/** One ring step (a shift): this rank's `input` chunk by chunk to the next rank (cut as `sends`), the previous
 *  rank's read straight into `output` where it lands whole (cut as `chunks`: their lengths may differ). */
export function shiftPhase(seat: RingSeat, input: Elems, output: Elems, chunks: Chunks, sends = chunks): Phase {
  const at = (h: ChunkHeader) => chunks.start(h.chunk);
  return {
    start: (send) => {
      for (let j = 0; j < sends.count; j++) send(0, j, sends.of(input, j));
    },
    frame: (f) => {
      const data = payloadView(output, f.payload);
      if (!isViewOf(data, output, at(f))) output.set(data as never, at(f));
      seat.pool.give(f.payload);
    },
    destination: (h) => bytesOf(output.subarray(at(h), at(h) + h.elements)),
  };
}
