// ZeRO++'s hpZ: the forward gather's weights are also kept, partitioned over the host's G ranks (a secondary
// copy of Ψ/G per rank), so that the backward gather runs on the host's own ring and nothing of it leaves the
// host. It plugs into ZeRO-3's gather (zero3-plus.ts).
import type { Collectives } from '../../../collectives/collectives.js';
import type { Elems, WireDtype } from '../../../tensor/dtype.js';
import type { MemoryLedger } from '../../../tensor/memory-ledger.js';
import type { ShardLayout, Unit } from '../../layout.js';

export class SecondaryPartition {
  /** This rank's part of every unit as gathered: M·S values of a unit of shard S (M = N/G hosts' worth). */
  private readonly secondary: Elems;
  private readonly M: number;

  constructor(
    private readonly host: Collectives, // the ring of this host's ranks
    world: number,
    layout: ShardLayout,
    ledger: MemoryLedger,
    dtype: WireDtype,
  ) {
    this.M = world / host.world;
    this.secondary = ledger.alloc('secondary', dtype, layout.paddedTotal / host.world);
  }

  /** Keep this rank's part of unit `u` as the forward pass gathered it. */
  keep(u: Unit, gathered: Elems): void {
    const S = this.M * u.shard;
    this.of(u).set(gathered.subarray(this.host.rank * S, (this.host.rank + 1) * S) as never);
  }

  /** Unit `u` whole again for the backward pass, from the host's ranks' parts, on the host's ring. */
  async gather(u: Unit, out: Elems, label: string): Promise<void> {
    await this.host.allGather(this.of(u), out, `${label} (host)`);
  }

  private of(u: Unit): Elems {
    return this.secondary.subarray(this.M * u.shardOffset, this.M * (u.shardOffset + u.shard));
  }
}
