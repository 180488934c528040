// Every rank's rings, as rank/assembly.ts and rank/hybrid-rings.ts wire them, but simulated: the run's ring,
// and where the run needs them the shard group's and cross rings (HSDP, hpZ) and qgZ's stride rings. Each ring
// is one SimGroup its members share; each rank gets collectives over it, as over a wired ring.
import type { CollectiveOptions } from '../shared/collectives/collectives.js';
import type { RunConfig } from '../shared/control/run-config.js';
import { crossMembers, groupMembers } from '../shared/control/shard-groups.js';
import { ringsNeeded } from '../shared/training/schemes/table.js';
import { Ring, type RingName } from '../shared/transport/ring.js';
import type { HybridRings } from '../rank/hybrid-rings.js';
import { strideCycle } from '../rank/hybrid-rings.js';
import type { Network } from './network/network.js';
import { SimCollectives, SimGroup } from './sim-collectives.js';

export interface SimRank {
  rank: number;
  coll: SimCollectives;
  hybrid: HybridRings | null;
}

export class SimRings {
  private readonly groups = new Map<string, SimGroup>();

  constructor(
    private readonly network: Network,
    private readonly opts: CollectiveOptions,
  ) {}

  /** Rank `rank`'s collectives over the ring of `members` (in ring order) named `name`. */
  private over(name: RingName, members: readonly number[], rank: number): SimCollectives {
    const key = `${name}:${members[0]}:${members.length}`;
    let g = this.groups.get(key);
    if (!g) this.groups.set(key, (g = new SimGroup(name, members, this.network)));
    return new SimCollectives(new Ring(members.indexOf(rank), members.length, null, null, name), { ...this.opts }, g);
  }

  /** Every rank of the world, with the rings the run's schemes train on. */
  ranks(c: RunConfig, world: number): SimRank[] {
    const all = Array.from({ length: world }, (_, r) => r);
    const { replicas, hpz, qgz } = ringsNeeded(c);
    return all.map((rank) => {
      const coll = this.over('main', all, rank);
      if (!replicas && !hpz && !qgz) return { rank, coll, hybrid: null };
      const G = c.shardGroup;
      const members = { group: groupMembers(rank, G), cross: crossMembers(rank, G, world) };
      const strides = (base: 'group' | 'cross') =>
        qgz ? Array.from({ length: members[base].length - 1 }, (_, i) => this.over(`${base}+${i + 1}`, strideCycle(members[base], rank, i + 1), rank)) : [];
      const hybrid: HybridRings = {
        group: replicas || hpz ? this.over('group', members.group, rank) : null,
        cross: replicas ? this.over('cross', members.cross, rank) : null,
        strides: qgz ? { group: strides('group'), cross: strides('cross') } : null,
        rings: [],
      };
      return { rank, coll, hybrid };
    });
  }

  /** The collectives some ranks wait in (for a stalled schedule's message). */
  waiting(): string {
    const w = [...this.groups.values()].flatMap((g) => g.waiting());
    return w.length ? w.slice(0, 5).join('; ') + (w.length > 5 ? `; and ${w.length - 5} more` : '') : 'no collective is open';
  }
}
