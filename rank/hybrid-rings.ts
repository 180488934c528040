// The hybrid scheme's two sub-rings, wired at set-up beside the run's ring: this rank's shard group, and the
// ranks holding the same shard in every group (shared/control/shard-groups.ts says who they are).
import type { Collectives, CollectiveOptions } from '../shared/collectives/collectives.js';
import type { ControlMessage } from '../shared/control/messages.js';
import { crossMembers, groupMembers } from '../shared/control/shard-groups.js';
import { wireSubRing, type PeerListener, type Ring } from '../shared/transport/ring.js';

export interface HybridRings {
  group: Collectives;
  cross: Collectives | null; // the hybrid's; ZeRO++'s hpZ needs the group ring alone
  rings: Ring[]; // to close with the rank
}

/** Null unless the run has the hybrid scheme or ZeRO++'s hpZ (its backward gathers on the host's ranks). */
export async function wireHybridRings(
  msg: Extract<ControlMessage, { type: 'assign' }>,
  listener: PeerListener,
  limits: { chunkBytes: number; timeoutMs: number; linkScale: number },
  collectives: (ring: Ring, opts: CollectiveOptions) => Collectives,
): Promise<HybridRings | null> {
  const c = msg.config;
  const hybrid = c.schemes.includes('hsdp');
  if (!hybrid && !c.zeropp?.hpz) return null;
  if (!msg.peers || msg.peers.length !== msg.world) throw new Error('the coordinator sent no ring addresses for the hybrid scheme');
  const G = c.shardGroup;
  const common = { self: msg.rank, peers: msg.peers, runId: msg.runId, ringKey: msg.ringKey, listener, ...limits };
  const [group, cross] = await Promise.all([
    wireSubRing({ ...common, ring: 'group', members: groupMembers(msg.rank, G) }),
    hybrid ? wireSubRing({ ...common, ring: 'cross', members: crossMembers(msg.rank, G, msg.world) }) : null,
  ]);
  return { group: collectives(group, limits), cross: cross && collectives(cross, limits), rings: cross ? [group, cross] : [group] };
}
