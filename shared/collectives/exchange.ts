// The engine under every ring algorithm: one collective's frames out to the next rank and in from the
// previous one, with its deadline, its byte tally and its failure handling. The algorithms (reduce-scatter.ts,
// all-gather.ts, all-reduce.ts) only say what to send first, what to do with each frame that arrives, and
// where an arriving payload should land.
import { ProtocolError } from '../control/schema.js';
import { bytesOf, type Elems } from '../tensor/dtype.js';
import type { PeerChannel } from '../transport/channel.js';
import type { ChunkFrame, ChunkHeader } from '../transport/frame.js';
import type { Ring } from '../transport/ring.js';
import type { Chunks } from './chunks.js';
import type { Tally } from './record.js';

/** Send one chunk; `written` runs once the socket no longer needs `data`. */
export type Sender = (step: number, chunk: number, data: Elems, written?: () => void) => void;

/** Where a frame's payload should be read to, or null for a buffer of its own. */
type Destination = (h: ChunkHeader) => Uint8Array | null;

/** One ring algorithm: its first sends, its handling of each frame, and where payloads land. Steps are its own. */
export interface Phase {
  start: (send: Sender) => void;
  frame: (f: ChunkFrame, send: Sender) => void;
  destination: Destination;
}

class CollectiveError extends Error {
  override name = 'CollectiveError';
}

export interface Exchange {
  ring: Ring;
  coll: number; // sequence number of the collective on this ring
  tally: Tally;
  timeoutMs: number;
  chunks: Chunks; // and the dtype of every frame
  steps: number; // ring steps: every chunk of every step arrives exactly once
  phase: Phase;
}

/** A frame's slot among the `expected` (step × chunk), or a ProtocolError if it does not belong. Checked when
 *  the envelope arrives (before its payload is read anywhere) and again on delivery, since frames that
 *  arrived before the collective started skip the first check. */
function frameCheck(chunks: Chunks, expected: number, seen: Uint8Array): (h: ChunkHeader) => number {
  return (h) => {
    if (h.dtype !== chunks.dtype) throw new ProtocolError(`frame dtype ${h.dtype}, expected ${chunks.dtype}`);
    if (h.chunk >= chunks.count || h.elements !== chunks.length(h.chunk))
      throw new ProtocolError(`frame chunk ${h.chunk} with ${h.elements} elements does not fit a segment of ${chunks.segment}`);
    const slot = h.step * chunks.count + h.chunk;
    if (slot >= expected || seen[slot]) throw new ProtocolError(`unexpected or repeated frame: step ${h.step}, chunk ${h.chunk}`);
    return slot;
  };
}

/**
 * Run one collective's frame exchange. It ends only when every frame has been received and every frame this
 * rank sent has been written to the socket, so callers may reuse their buffers as soon as it resolves.
 */
export function exchange({ ring, coll, tally, timeoutMs, chunks, steps, phase }: Exchange): Promise<void> {
  const dtype = chunks.dtype;
  const next = ring.next as PeerChannel;
  const prev = ring.prev as PeerChannel;
  const expected = steps * chunks.count;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let received = 0;
    let unwritten = 0;
    const seen = new Uint8Array(expected);
    const cleanups: (() => void)[] = [];
    const finish = (err?: Error) => {
      if (settled) return;
      if (!err && (received < expected || unwritten > 0)) return;
      settled = true;
      clearTimeout(timer);
      for (const c of cleanups) c();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => {
      const e = new CollectiveError(
        `collective ${coll} on rank ${ring.rank} timed out after ${timeoutMs} ms: ${received}/${expected} frames from rank ${prev.peerRank}, ${unwritten} frames to rank ${next.peerRank} not yet written`,
      );
      finish(e);
      prev.abort(e);
      next.abort(e);
    }, timeoutMs);
    const send: Sender = (step, chunk, data, written) => {
      unwritten++;
      tally.sent.payload += data.byteLength;
      tally.sent.envelope += next.send({ coll, step, chunk, dtype, elements: data.length }, bytesOf(data), () => {
        unwritten--;
        written?.();
        finish();
      });
    };
    const check = frameCheck(chunks, expected, seen);
    cleanups.push(prev.onFailure(finish), next.onFailure(finish));
    try {
      phase.start(send);
      const unlisten = prev.listen(coll, {
        destination: (h) => (check(h), phase.destination(h)),
        frame: (f) => {
          seen[check(f)] = 1;
          tally.recv.payload += f.payload.byteLength;
          tally.recv.envelope += f.envelopeBytes;
          phase.frame(f, send);
          received++;
          finish();
        },
      });
      // A step that sends nothing can finish inside listen, on frames that came early: marked finished now.
      if (settled) unlisten();
      else cleanups.push(unlisten);
      finish(); // nothing to send or receive (an empty segment of a variable all-gather): done at once
    } catch (err) {
      finish(err as Error);
    }
  });
}
