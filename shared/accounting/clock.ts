// A common clock for the whole run: each rank estimates its offset from the coordinator's clock the way NTP
// does (send t0, the coordinator stamps t1, back at t2: offset = t1 - (t0 + t2) / 2), keeping the sample
// with the shortest round trip, whose half is the estimate's uncertainty. Collectives' entries and exits
// are then comparable across ranks: which rank entered last, and so how long each waited for it.
import { covered, overlapMs, union } from '../transport/wire-log.js';

/** Milliseconds on this process's clock: wall-clock epoch with sub-millisecond resolution. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

export interface ClockEstimate {
  offsetMs: number; // add to this process's clock to get the coordinator's
  uncertaintyMs: number; // half the shortest round trip: the true offset lies within ± this
}

/** The estimate from samples (t0 sent, t1 coordinator's stamp, t2 received), best round trip kept. */
export function estimateOffset(samples: { t0: number; t1: number; t2: number }[]): ClockEstimate {
  if (!samples.length) throw new Error('clock: no samples');
  const best = samples.reduce((a, b) => (b.t2 - b.t0 < a.t2 - a.t0 ? b : a));
  return { offsetMs: best.t1 - (best.t0 + best.t2) / 2, uncertaintyMs: (best.t2 - best.t0) / 2 };
}

/** Per rank over one step's collectives: how long it waited for the last rank to enter one, and how long the
 *  transfers then took it. `entry`/`exit` are [rank][collective] on the common clock. Collectives may run at
 *  once (a bucket's units, ZeRO-3's prefetch): each is time covered, not a sum, and time in which one
 *  collective moves while another still waits for a rank counts as transfer. */
export function waitAndTransfer(entry: number[][], exit: number[][]): { wait: number[]; transfer: number[] } | null {
  const ranks = entry.length;
  const count = entry[0]?.length ?? 0;
  if (entry.some((e) => e.length !== count)) return null; // not the same collectives everywhere: no pairing
  const last = Array.from({ length: count }, (_, i) => Math.max(...entry.map((e) => e[i])));
  const wait = new Array<number>(ranks).fill(0);
  const transfer = new Array<number>(ranks).fill(0);
  for (let r = 0; r < ranks; r++) {
    const waiting = union(last.map((t, i) => [entry[r][i], t] as const));
    const moving = union(last.map((t, i) => [Math.max(t, entry[r][i]), exit[r][i]] as const));
    transfer[r] = covered(moving);
    wait[r] = covered(waiting) - overlapMs(waiting, moving);
  }
  return { wait, transfer };
}
