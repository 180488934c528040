// The ring's links against its hosts: rank r sends to rank r+1 (on the hybrid's sub-rings, to the next rank
// of its group or of its cross ring), and that link either stays on r's host (loopback) or crosses the network.
import type { RingName } from '../transport/ring.js';
import { crossMembers, groupMembers } from '../control/shard-groups.js';

/** For each rank r (by id), whether its link to rank r+1 leaves its host. */
export function crossHostLinks(hostByRank: readonly string[]): boolean[] {
  return hostByRank.map((h, r) => hostByRank.length > 1 && h !== hostByRank[(r + 1) % hostByRank.length]);
}

/** The rank that rank `r` sends to on `ring` (G: the hybrid's shard group). */
function nextOnRing(ring: RingName, r: number, world: number, G: number): number {
  if (ring === 'main') return (r + 1) % world;
  const [base, stride = '1'] = ring.split('+');
  const members = base === 'group' ? groupMembers(r, G) : crossMembers(r, G, world);
  return members[(members.indexOf(r) + Number(stride)) % members.length];
}

/** Whether rank `r`'s link on `ring` leaves its host. */
export function linkCrossesHosts(ring: RingName, r: number, hostByRank: readonly string[], G: number): boolean {
  return hostByRank[r] !== hostByRank[nextOnRing(ring, r, hostByRank.length, G)];
}
