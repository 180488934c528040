// What a run is, resolved once from its config and world size: the model, how it is laid out and sharded,
// and each scheme's theory (model states, peak, bytes per step, the heap a rank needs). The coordinator and
// every rank make one and pass it down, so no one re-derives the model or the layout on the way.
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { ShardLayout, type LayoutSizes } from '../training/layout.js';
import { modelSpec, type ModelSpec } from '../training/model.js';
import { SCHEME_TABLE } from '../training/schemes/table.js';
import { heapBytes, memoryTheory, trafficTheory, type MemoryTheory } from './theory.js';

export class RunPlan {
  readonly spec: ModelSpec;
  /** Rank 0's layout (every rank's sizes are the same; only which slices it owns differ). */
  readonly layout0: ShardLayout;
  readonly sizes: LayoutSizes;

  constructor(
    readonly config: RunConfig,
    readonly world: number,
  ) {
    this.spec = modelSpec(config);
    this.layout0 = new ShardLayout(this.spec, world, 0, config.unit);
    this.sizes = this.layout0.sizes();
  }

  private theta?: Float32Array;

  /** The initial parameters every rank derives from the seed (made once per run, shared by its schemes;
   *  setup copies them into its own bands, so they are never written). */
  theta0(): Float32Array {
    return (this.theta ??= this.spec.init(this.config.seed));
  }

  /** Rank `rank`'s layout: its units, padding and shards. */
  layout(rank: number): ShardLayout {
    return rank === 0 ? this.layout0 : new ShardLayout(this.spec, this.world, rank, this.config.unit);
  }

  /** Model states per band, resident and at the step's worst moment. */
  memory(scheme: SchemeName): MemoryTheory {
    return memoryTheory(SCHEME_TABLE[scheme], this.sizes, this.config.wireDtype, this.config);
  }

  /** Payload bytes one rank sends per optimizer step (all its micro-batches). */
  traffic(scheme: SchemeName): number {
    return trafficTheory(SCHEME_TABLE[scheme], this.sizes, this.config.wireDtype, this.config.accumulate);
  }

  /** The WebAssembly heap a rank of this scheme allocates its bands in. */
  heapBytes(scheme: SchemeName): number {
    return heapBytes(SCHEME_TABLE[scheme], this.sizes, this.config.wireDtype, this.config);
  }
}
