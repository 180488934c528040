// What a run is, resolved once from its config and world size: the model, how it is laid out and sharded,
// and each scheme's theory (model states, peak, bytes per step, the heap a rank needs). The coordinator and
// every rank make one and pass it down, so no one re-derives the model or the layout on the way.
import { modeledDevice, type RunConfig, type SchemeName } from '../control/run-config.js';
import { extentOf } from '../tensor/extent.js';
import { componentsOf, gathersParameters } from '../training/schemes/table.js';
import { persistedLayout, persistedSizes } from '../training/persisted-layout.js';
import { ShardLayout, type LayoutSizes, type PersistedSizes } from '../training/layout.js';
import { gpuModel, modelSpec, type ModelSpec } from '../models/registry.js';
import { recomputes, type GpuModel } from '../whatif/model-passes.js';
import { isHybrid, SCHEME_TABLE } from '../training/schemes/table.js';
import { pcieTheory } from './offload-theory.js';
import { crossGroupTraffic, heapBytes, memoryTheory, trafficParts, type MemoryTheory, type ZeroPPTheory } from './theory.js';

export class RunPlan {
  readonly spec: ModelSpec;
  /** Rank 0's layout (every rank's sizes are the same; only which slices it owns differ). */
  readonly layout0: ShardLayout;
  readonly sizes: LayoutSizes;
  /** The model with its GPU passes, for the what-if's cost model. */
  readonly gpu: GpuModel;

  constructor(
    readonly config: RunConfig,
    readonly world: number,
  ) {
    this.spec = modelSpec(config);
    this.gpu = gpuModel(this.spec);
    this.layout0 = new ShardLayout(this.spec, world, 0, config.unit);
    this.sizes = this.layout0.sizes();
  }

  private theta?: Float32Array;
  private groupSizes?: LayoutSizes; // the hybrid's, over its shard group
  private readonly persistedBy = new Map<number, PersistedSizes>(); // the persisted tensors' sizes, by shard world
  private readonly regatheredBy = new Map<number, boolean[]>(); // units gathered again after their recompute, by shard world

  /** The initial parameters every rank derives from the seed (made once per run, shared by its schemes;
   *  setup copies them into its own bands, so they are never written). */
  theta0(): Float32Array {
    // Modeled compute materializes no parameters: an extent of their size stands for them.
    return (this.theta ??= this.modeled ? extentOf('fp32', this.spec.params) : this.spec.init(this.config.seed));
  }

  /** Whether compute is a modeled accelerator's (--compute model:...): no values exist anywhere. */
  get modeled(): boolean {
    return modeledDevice(this.config) !== null;
  }

  /** Rank `rank`'s layout: its units, padding and shards. */
  layout(rank: number): ShardLayout {
    return rank === 0 ? this.layout0 : new ShardLayout(this.spec, this.world, rank, this.config.unit);
  }

  /** The ranks a scheme shards over: its shard group for the hybrid, else the world. */
  shardWorld(scheme: SchemeName): number {
    return isHybrid(scheme) ? this.config.shardGroup : this.world;
  }

  /** Rank `rank`'s layout under `scheme`: the hybrid shards over the rank's group, at its place in it. */
  layoutFor(scheme: SchemeName, rank: number): ShardLayout {
    const G = this.shardWorld(scheme);
    return G === this.world ? this.layout(rank) : new ShardLayout(this.spec, G, rank % G, this.config.unit);
  }

  /** The sizes the theory needs under `scheme` (the hybrid's made once), with the persisted tensors where
   *  it gathers parameters and the run has a persistence threshold. */
  sizesFor(scheme: SchemeName): LayoutSizes {
    const s = this.sizesOf(scheme);
    const regathered = this.regathered(scheme);
    return regathered ? { ...s, regathered } : s;
  }

  /** Units gathered again for their backward pass after their recompute (a block's, under --recompute with
   *  --recompute-regather, where the scheme gathers parameters), by unit; null where none is. */
  regathered(scheme: SchemeName): boolean[] | null {
    const c = this.config;
    if (!c.recompute || !c.recomputeRegather || !gathersParameters(scheme)) return null;
    const G = this.shardWorld(scheme); // laid out once per shard world, as the persisted tensors are
    let by = this.regatheredBy.get(G);
    if (!by) this.regatheredBy.set(G, (by = this.layoutFor(scheme, 0).units.map((u) => u.pieces.some((p) => recomputes(this.gpu, p.layer.index)))));
    return by;
  }

  private sizesOf(scheme: SchemeName): LayoutSizes {
    const s = this.shardWorld(scheme) === this.world ? this.sizes : (this.groupSizes ??= this.layoutFor(scheme, 0).sizes());
    if (!this.config.persist || !gathersParameters(scheme) || componentsOf(this.config, scheme)) return s;
    const G = this.shardWorld(scheme);
    let persisted = this.persistedBy.get(G); // laid out once per shard world: the theory asks often
    if (!persisted) this.persistedBy.set(G, (persisted = persistedSizes(persistedLayout(this.layoutFor(scheme, 0), this.config.persist))));
    return { ...s, persisted };
  }

  /** ZeRO++'s components where this scheme has them (ZeRO-3 with --qwz or --hpz), with the host's ranks. */
  zeroPP(scheme: SchemeName): ZeroPPTheory | undefined {
    const z = componentsOf(this.config, scheme);
    return z && { ...z, G: this.config.shardGroup || this.world };
  }

  /** Model states per band, resident and at the step's worst moment. */
  memory(scheme: SchemeName): MemoryTheory {
    return memoryTheory(SCHEME_TABLE[scheme], this.sizesFor(scheme), this.config.wireDtype, this.config, this.zeroPP(scheme), this.config.offload);
  }

  /** Payload bytes one rank sends per optimizer step (all its micro-batches), on its ring or (the hybrid) its
   *  group's ring and its cross ring. */
  trafficSplit(scheme: SchemeName): { group: number; cross: number; host: number } {
    const c = this.config;
    const parts = trafficParts(SCHEME_TABLE[scheme], this.sizesFor(scheme), c.wireDtype, c.accumulate, c.linkScale, this.zeroPP(scheme));
    const group = parts.trainable + parts.frozen - parts.host - parts.cross; // the scheme's own ring: the run's, or the hybrid's group ring
    if (!isHybrid(scheme)) return { group, cross: parts.cross, host: parts.host }; // ZeRO++: rings within the host, qgZ's across
    return { group, cross: crossGroupTraffic(this.sizesFor(scheme), this.world / c.shardGroup, c.wireDtype, c.accumulate, c.linkScale), host: 0 };
  }

  /** Of those, the frozen parameters' gathers (ZeRO-3 and the hybrid's; 0 where nothing is frozen). */
  frozenTraffic(scheme: SchemeName): number {
    const c = this.config;
    return trafficParts(SCHEME_TABLE[scheme], this.sizesFor(scheme), c.wireDtype, c.accumulate, c.linkScale).frozen;
  }

  /** Payload bytes one rank sends per optimizer step. */
  traffic(scheme: SchemeName): number {
    const t = this.trafficSplit(scheme);
    return t.group + t.cross + t.host;
  }

  /** The WebAssembly heap a rank of this scheme allocates its bands in. */
  heapBytes(scheme: SchemeName): number {
    return heapBytes(SCHEME_TABLE[scheme], this.sizesFor(scheme), this.config.wireDtype, this.config, this.zeroPP(scheme), this.config.offload);
  }

  /** Offload: bytes one rank copies between device and host per optimizer step (offload-theory.ts); null without. */
  pcie(scheme: SchemeName): { d2h: number; h2d: number } | null {
    const c = this.config;
    return c.offload ? pcieTheory(SCHEME_TABLE[scheme], this.sizesFor(scheme), c.wireDtype, c.accumulate, c.offload) : null;
  }
}
