// A what-if rank's collectives (--compute model:...; its bands are extents without values): every frame the
// real ring algorithm sends, of the same size, at the same step and in the same order, carrying bytes that
// mean nothing. Reduce-scatter, all-gather and the fused all-reduce all look alike on the wire: the first
// step's chunks go out at once, and every chunk that arrives before the last step is passed on to the next
// rank. The reductions are the modeled device's work, not this CPU's.
import { emptyOf, type Elems, type WireDtype } from '../tensor/dtype.js';
import type { Chunks } from '../collectives/chunks.js';
import type { Phase } from '../collectives/exchange.js';
import { payloadView, type RingSeat } from '../collectives/reduce-scatter.js';

/** One chunk of zeros per dtype: the synthetic payload every frame sends a view of. */
export class SyntheticPayload {
  private readonly zeros = new Map<WireDtype, Elems>();

  of(dtype: WireDtype, elements: number): Elems {
    let z = this.zeros.get(dtype);
    if (!z || z.length < elements) this.zeros.set(dtype, (z = emptyOf(dtype, elements)));
    return z.subarray(0, elements);
  }
}

/** Chunks of the first step in flight at once. */
const SEND_WINDOW = 8;

export function syntheticPhase(seat: RingSeat, chunks: Chunks, steps: number, payload: SyntheticPayload, sends = chunks): Phase {
  const { pool } = seat;
  const like = payload.of(chunks.dtype, 0);
  return {
    // The first step's chunks go out a window at a time, the next as one is written: the real algorithm hands
    // the socket a whole segment at once, which costs nothing extra there (the band holds it anyway) but here
    // would queue a segment's worth of masked copies (hundreds of MB for a 7B block) with no band behind them.
    start: (send) => {
      let next = 0;
      const more = () => {
        const j = next++;
        if (j < sends.count) send(0, j, payload.of(sends.dtype, sends.length(j)), more);
      };
      for (let k = 0; k < SEND_WINDOW; k++) more();
    },
    frame: (f, send) => {
      const release = () => pool.give(f.payload);
      if (f.step + 1 < steps) send(f.step + 1, f.chunk, payloadView(like, f.payload), release);
      else release();
    },
    destination: (h) => pool.take(h.elements * like.BYTES_PER_ELEMENT),
  };
}
