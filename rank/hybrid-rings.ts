// The sub-rings wired at set-up beside the run's ring: this rank's shard group and the ranks holding the same
// shard in every group (the hybrid scheme; shared/control/shard-groups.ts says who they are), the group ring
// alone (ZeRO++'s hpZ), and for qgZ's all-to-alls the same members s apart for every stride s (group+s,
// cross+s): a direct link to each rank it exchanges with, authenticated, live and capped as any ring link.
import type { Collectives, CollectiveOptions } from '../shared/collectives/collectives.js';
import type { ControlMessage } from '../shared/control/messages.js';
import { crossMembers, groupMembers } from '../shared/control/shard-groups.js';
import { ringsNeeded } from '../shared/training/schemes/table.js';
import { wireSubRing, type PeerListener, type Ring, type SubRingName } from '../shared/transport/ring.js';

export interface HybridRings {
  group: Collectives | null; // the hybrid's and hpZ's
  cross: Collectives | null; // the hybrid's
  /** qgZ: rings of stride 1, 2, ... K-1 over the group's K ranks and over the cross ring's: an all-to-all's links. */
  strides: { group: Collectives[]; cross: Collectives[] } | null;
  rings: Ring[]; // to close with the rank
}

/** The cycle of `members` (in ring order) that steps `stride` at a time through `self`'s place, from its first
 *  place: every member of the cycle lists it alike, so a ring's positions agree (stride 1: `members` as given). */
export function strideCycle(members: readonly number[], self: number, stride: number): number[] {
  const K = members.length;
  const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
  const start = members.indexOf(self) % gcd(stride, K);
  const out: number[] = [];
  for (let p = start; out.length === 0 || p !== start; p = (p + stride) % K) out.push(members[p]);
  return out;
}

/** Null unless the run has the hybrid scheme or ZeRO++'s hpZ or qgZ. qgZ's stride rings are its own (`group+1`
 *  too): hpZ's gathers on the group ring are issued in another order than qgZ's exchanges. */
export async function wireHybridRings(
  msg: Extract<ControlMessage, { type: 'assign' }>,
  listener: PeerListener,
  limits: { chunkBytes: number; timeoutMs: number; linkScale: number },
  collectives: (ring: Ring, opts: CollectiveOptions) => Collectives,
): Promise<HybridRings | null> {
  const c = msg.config;
  const { replicas: hybrid, hpz, qgz } = ringsNeeded(c);
  if (!hybrid && !hpz && !qgz) return null;
  if (!msg.peers || msg.peers.length !== msg.world) throw new Error('the coordinator sent no ring addresses for the sub-rings');
  const G = c.shardGroup;
  const common = { self: msg.rank, peers: msg.peers, runId: msg.runId, ringKey: msg.ringKey, listener, ...limits };
  const members = { group: groupMembers(msg.rank, G), cross: crossMembers(msg.rank, G, msg.world) };
  const wire = (name: SubRingName, base: 'group' | 'cross', s: number) =>
    wireSubRing({ ...common, ring: name, members: strideCycle(members[base], msg.rank, s) });
  const strides = (base: 'group' | 'cross') => (qgz ? Array.from({ length: members[base].length - 1 }, (_, i) => wire(`${base}+${i + 1}`, base, i + 1)) : []);
  const [group, cross, groupStrides, crossStrides] = await Promise.all([
    hybrid || hpz ? wire('group', 'group', 1) : null,
    hybrid ? wire('cross', 'cross', 1) : null,
    Promise.all(strides('group')),
    Promise.all(strides('cross')),
  ]);
  const coll = (r: Ring) => collectives(r, limits);
  return {
    group: group && coll(group),
    cross: cross && coll(cross),
    strides: qgz ? { group: groupStrides.map(coll), cross: crossStrides.map(coll) } : null,
    rings: [group, cross, ...groupStrides, ...crossStrides].filter((r): r is Ring => r !== null),
  };
}
