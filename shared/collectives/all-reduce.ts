// All-reduce of an evenly divisible buffer as one pipelined ring of 2(N-1) steps: as soon as a chunk of this
// rank's segment is fully reduced it goes out as the all-gather's first step, instead of waiting for the
// whole reduce-scatter to finish. Steps N-1 .. 2N-3 on the wire are the all-gather's 0 .. N-2.
import type { Elems } from '../tensor/dtype.js';
import type { ChunkHeader } from '../transport/frame.js';
import { allGatherPhase } from './all-gather.js';
import type { Chunks } from './chunks.js';
import type { Phase, Sender } from './exchange.js';
import { reduceScatterPhase, type RingSeat } from './reduce-scatter.js';

export function allReducePhase(seat: RingSeat, buf: Elems, chunks: Chunks): Phase {
  const S = chunks.segment;
  const own = buf.subarray(seat.rank * S, (seat.rank + 1) * S);
  const AG = seat.world - 1; // the all-gather's step 0 on the wire
  let gatherSend: Sender = () => undefined;
  const reduce = reduceScatterPhase(seat, buf, own, chunks, (j) => gatherSend(0, j, chunks.of(own, j)));
  const gather = allGatherPhase(seat, buf, chunks);
  const shifted = <H extends ChunkHeader>(h: H): H => ({ ...h, step: h.step - AG });
  return {
    start: (send) => {
      gatherSend = (step, chunk, data, written) => send(step + AG, chunk, data, written);
      reduce.start(send);
    },
    frame: (f, send) => (f.step < AG ? reduce.frame(f, send) : gather.frame(shifted(f), gatherSend)),
    destination: (h) => (h.step < AG ? reduce.destination(h) : gather.destination(shifted(h))),
  };
}
