// Where a collective's bytes and time are counted: payload and envelopes frame by frame as they go out and
// come in (the tally), the socket's own byte counters around the whole collective, and its wall time.
import type { Traffic } from '../control/messages.js';
import { dtypeOf, paddedLength, type Elems, type WireDtype } from '../tensor/dtype.js';
import type { Ring, RingName } from '../transport/ring.js';
import { now } from '../time/clock.js';

/** shift: one step of a ring, the piece an all-to-all is made of (all-to-all.ts). */
export type CollectiveKind = 'reduce-scatter' | 'all-gather' | 'all-reduce' | 'barrier' | 'shift';

export interface CollectiveRecord {
  kind: CollectiveKind;
  ring: RingName; // which of the rank's rings it ran on
  label: string;
  elements: number; // the caller's length
  padded: number; // what travelled: a multiple of the world size
  dtype: WireDtype;
  sent: Traffic; // to the next rank
  recv: Traffic; // from the previous rank
  startMs: number; // the clock (time/clock.ts) at the start
  ms: number;
}

/** Bytes of one collective, counted as its frames go out and come in. */
export interface Tally {
  sent: Traffic;
  recv: Traffic;
}

export function zeroTraffic(): Traffic {
  return { payload: 0, envelope: 0, frame: 0 };
}

export function addTraffic(a: Traffic, b: Traffic): Traffic {
  return { payload: a.payload + b.payload, envelope: a.envelope + b.envelope, frame: a.frame + b.frame };
}

/**
 * Run one collective's `work` and record what it cost. Payload and envelope bytes are counted frame by frame
 * for this collective alone; `frame` is the socket's byte count over the collective's lifetime, which is
 * exact when collectives run one at a time and includes a concurrent one's bytes when they overlap (prefetch).
 */
export async function measure(
  ring: Ring,
  kind: CollectiveKind,
  label: string,
  sized: Elems,
  work: (tally: Tally) => Promise<void>,
  always = false, // run even when `sized` is empty (a numbered shift that sends but receives nothing, or neither)
): Promise<CollectiveRecord> {
  const { next, prev } = ring;
  const t0 = now();
  const sent0 = next?.socketSent() ?? 0;
  const recv0 = prev?.socketReceived() ?? 0;
  const tally: Tally = { sent: zeroTraffic(), recv: zeroTraffic() };
  if (always || sized.length > 0) await work(tally);
  return {
    kind,
    ring: ring.name,
    label,
    elements: sized.length,
    padded: paddedLength(sized.length, ring.world),
    dtype: dtypeOf(sized),
    sent: { ...tally.sent, frame: next ? next.socketSent() - sent0 : 0 },
    recv: { ...tally.recv, frame: prev ? prev.socketReceived() - recv0 : 0 },
    startMs: t0,
    ms: now() - t0,
  };
}

/** Wall time covered by at least one of the collectives (they overlap when ZeRO-3 prefetches). */
export function busyTime(records: CollectiveRecord[]): number {
  const spans = records.map((r) => [r.startMs, r.startMs + r.ms]).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}
