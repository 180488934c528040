// The ranks that joined, as the coordinator knows them, and how it names one when the run fails: by id, host,
// address and pid, and by where the run was.
import type { WebSocket } from 'ws';
import type { Liveness } from '../shared/transport/liveness.js';
import type { SchemeName } from '../shared/control/run-config.js';

export interface RankInfo {
  rank: number; // in join order until the run starts; then final (see ring-order.ts)
  address: string; // what other ranks dial: --advertise, or where the coordinator saw it connect from
  peerPort: number;
  host: string; // what the ring groups by: its --host-id, or its address
  requested?: number; // the rank id it asked for
  worldSize?: number; // the world size it expects
  hostname: string;
  pid: number;
  from: string; // remote address of the control connection
}

export class CoordinatorError extends Error {
  override name = 'CoordinatorError';
}

export interface Member {
  ws: WebSocket;
  info: RankInfo;
  liveness: Liveness; // heard from: any message, ping, pong or byte
  aborted: CoordinatorError | null; // the rank said why it stops: its words, not its disconnect, are the verdict
  suspect: number | null; // ... and, when a ring link failed, whom it lost
  largestMessage: number; // bytes
}

/** "rank 2 (hostB, 10.0.0.7, pid 4242) during zero3 step 17". */
export function nameOf(m: Member, current: { scheme: SchemeName; step: number } | null): string {
  const at = current ? ` during ${current.scheme} step ${current.step}` : '';
  return `rank ${m.info.rank} (${m.info.hostname}, ${m.info.address}, pid ${m.info.pid})${at}`;
}

/** A rank that its ring neighbours lost (silent, or its link cut) and that gave no reason of its own, with
 *  the neighbour's report; whoever spoke first, that rank is the culprit. */
export function lostOnTheRing(members: readonly Member[]): { lost: Member; report: CoordinatorError } | null {
  for (const r of members) {
    if (!r.aborted || r.suspect === null) continue;
    const lost = members.find((m) => m.info.rank === r.suspect);
    if (lost && !lost.aborted) return { lost, report: r.aborted };
  }
  return null;
}
