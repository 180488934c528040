// How the flat parameter vector is cut into units (the granularity of one ZeRO-3 all-gather) and sharded.
// A unit has two halves: what trains (its fields below: the gradients, the fp32 masters and Adam's moments are
// laid out over the trainable halves alone) and what is frozen (`frozen`: held only as the 16-bit working copy,
// never reduced, never updated; empty unless adapters.ts froze something). Each half of each unit is padded to
// a multiple of the world size on its own, like an FSDP flat parameter, so that rank r owns slice r of every
// half. Full-size buffers use the padded layout; shards concatenate the owned slices of all units.
//
// Three flat vectors: the model's (the spec's order: each group's frozen prefix, then its trainable rest), the
// trainable one (every group's trainable rest, in order: what `params`, pad, shardOf and assemble speak of) and
// the frozen one (every frozen prefix, in order).
import type { ModelSpec } from './model-spec.js';
import type { ParamGroup } from './param-group.js';
import type { UnitMode } from '../control/run-config.js';

/** Sizes the accounting needs; a ShardLayout provides them, and `plan` builds them from a bare count. */
export interface LayoutSizes {
  params: number; // trainable, unpadded
  paddedTotal: number; // full-size trainable buffers
  shardTotal: number; // one rank's trainable shard
  maxUnitPadded: number; // the largest trainable half (one gradient bucket)
  unitPadded: number[]; // every unit's trainable half, padded
  world: number;
  frozen?: FrozenSizes; // absent: nothing frozen
  persisted?: PersistedSizes; // ZeRO-3 with a persistence threshold (persisted-layout.ts); absent: none
  tied?: TiedSizes; // a head that borrows the token table (schemes/tied.ts); absent: none
  regathered?: boolean[]; // per unit: gathered again after its recompute (ZeRO-3, --recompute-regather); absent: none
}

/** A tied head: the unit that borrows and the one that lends (ZeRO-3 gathers the lender again for the head's
 *  passes), and the scratch the step hands the head's passes (its trainable rest and the table). */
export interface TiedSizes {
  borrower: number;
  lender: number;
  scratch: number;
  table: number;
}

/** What the theory needs of the persisted tensors: the band's elements, and per unit each half's gathered
 *  elements per rank (null: that half is gathered whole) and the trainable half's persisted ones per rank. */
export interface PersistedSizes {
  kept: number;
  units: { trainable: number[] | null; frozen: number[] | null; keptPerRank: number[] | null }[];
}

/** The frozen halves' sizes. */
interface FrozenSizes {
  params: number;
  paddedTotal: number;
  shardTotal: number;
  unitPadded: number[];
  backwardUnits: boolean[]; // per unit: whether the backward pass reaches it (see ShardLayout.backwardFrom)
}

/** One half of a unit: where it starts in its flat vector, its size, and its padded and sharded places. */
export interface Half {
  offset: number; // start in the unpadded flat vector of its kind
  size: number;
  shard: number; // ceil(size / world): what each rank owns
  padded: number; // shard * world
  paddedOffset: number; // start in the padded full layout of its kind
  shardOffset: number; // start inside a rank's shard of its kind
}

/** A group inside its unit: where its frozen prefix and its trainable rest lie in the unit's two halves. */
export interface Piece {
  layer: ParamGroup;
  frozenAt: number;
  trainAt: number;
}

export interface Unit extends Half {
  index: number;
  layers: readonly ParamGroup[]; // consecutive parameter groups computed with this unit's parameters
  frozen: Half;
  pieces: Piece[];
}

/** Halves of the given sizes laid out one after another for `world` ranks. */
function halves(sizes: number[], world: number): { list: Half[]; paddedTotal: number; shardTotal: number } {
  let [offset, paddedOffset, shardOffset] = [0, 0, 0];
  const list = sizes.map((size) => {
    const shard = Math.ceil(size / world);
    const h = { offset, size, shard, padded: shard * world, paddedOffset, shardOffset };
    offset += size;
    paddedOffset += h.padded;
    shardOffset += shard;
    return h;
  });
  return { list, paddedTotal: paddedOffset, shardTotal: shardOffset };
}

export class ShardLayout {
  readonly units: Unit[];
  readonly paddedTotal: number;
  readonly shardTotal: number;
  readonly frozenPaddedTotal: number;
  readonly frozenShardTotal: number;
  /** The first unit the backward pass computes: the units before it have nothing trainable and no trainable
   *  unit before them, so nothing needs their input's gradient (PyTorch's autograd never reaches them). */
  readonly backwardFrom: number;

  constructor(
    readonly spec: ModelSpec,
    readonly world: number,
    readonly rank: number,
    readonly mode: UnitMode,
  ) {
    if (!Number.isInteger(world) || world < 1) throw new RangeError(`world size must be a positive integer, got ${world}`);
    if (!Number.isInteger(rank) || rank < 0 || rank >= world) throw new RangeError(`rank ${rank} is not in 0..${world - 1}`);
    const groups: (readonly ParamGroup[])[] = mode === 'layer' ? spec.layers.map((l) => [l]) : [spec.layers];
    const sum = (ls: readonly ParamGroup[], f: (l: ParamGroup) => number) => ls.reduce((s, l) => s + f(l), 0);
    const trainable = halves(
      groups.map((ls) => sum(ls, (l) => l.size - l.frozen)),
      world,
    );
    const frozen = halves(
      groups.map((ls) => sum(ls, (l) => l.frozen)),
      world,
    );
    this.units = groups.map((layers, index) => {
      let [frozenAt, trainAt] = [0, 0];
      const pieces = layers.map((layer) => {
        const p = { layer, frozenAt, trainAt };
        frozenAt += layer.frozen;
        trainAt += layer.size - layer.frozen;
        return p;
      });
      return { index, layers, ...trainable.list[index], frozen: frozen.list[index], pieces };
    });
    this.paddedTotal = trainable.paddedTotal;
    this.shardTotal = trainable.shardTotal;
    this.frozenPaddedTotal = frozen.paddedTotal;
    this.frozenShardTotal = frozen.shardTotal;
    const first = this.units.findIndex((u) => u.size > 0);
    this.backwardFrom = first < 0 ? this.units.length : first;
  }

  /** Trainable parameters (the length of the trainable flat vector). */
  get params(): number {
    return this.units.reduce((s, u) => s + u.size, 0);
  }

  /** Frozen parameters. */
  get frozenParams(): number {
    return this.units.reduce((s, u) => s + u.frozen.size, 0);
  }

  /** Where this rank's slice of a unit's half sits in the padded full layout of its kind. */
  ownOffset(u: Half): number {
    return u.paddedOffset + this.rank * u.shard;
  }

  /** The largest unit's trainable half, padded: what one gradient bucket holds. */
  get maxUnitPadded(): number {
    return Math.max(...this.units.map((u) => u.padded));
  }

  /** The largest unit, both halves padded: what one gathered unit holds. */
  get maxGatheredPadded(): number {
    return Math.max(...this.units.map((u) => u.padded + u.frozen.padded));
  }

  /** The sizes the theory needs. */
  sizes(): LayoutSizes {
    const s: LayoutSizes = {
      params: this.params,
      paddedTotal: this.paddedTotal,
      shardTotal: this.shardTotal,
      maxUnitPadded: this.maxUnitPadded,
      unitPadded: this.units.map((u) => u.padded),
      world: this.world,
    };
    const tied = this.tiedSizes();
    if (tied) s.tied = tied;
    if (this.frozenParams === 0) return s;
    const frozen = {
      params: this.frozenParams,
      paddedTotal: this.frozenPaddedTotal,
      shardTotal: this.frozenShardTotal,
      unitPadded: this.units.map((u) => u.frozen.padded),
      backwardUnits: this.units.map((u) => u.index >= this.backwardFrom),
    };
    return { ...s, frozen };
  }

  private tiedSizes(): TiedSizes | undefined {
    const unitOf = (group: number) => this.units.findIndex((u) => u.layers.some((l) => l.index === group));
    const l = this.units.flatMap((u) => u.layers).find((x) => x.borrows);
    if (!l?.borrows) return undefined;
    return { borrower: unitOf(l.index), lender: unitOf(l.borrows.from), scratch: l.size - l.frozen + l.borrows.size, table: l.borrows.size };
  }

  /** The model's flat vector -> its trainable flat vector (`theta` itself when nothing is frozen). */
  trainableOf(theta: Float32Array): Float32Array {
    if (this.frozenParams === 0) return theta;
    const out = new Float32Array(this.params);
    for (const u of this.units)
      for (const p of u.pieces) out.set(theta.subarray(p.layer.offset + p.layer.frozen, p.layer.offset + p.layer.size), u.offset + p.trainAt);
    return out;
  }

  /** Unit `u`'s frozen half, unpadded, from the model's flat vector, into `out`. */
  frozenHalfInto(theta: Float32Array, u: Unit, out: Float32Array): void {
    for (const p of u.pieces) out.set(theta.subarray(p.layer.offset, p.layer.offset + p.layer.frozen), p.frozenAt);
  }

  /** The model's flat vector `theta` with its trainable parameters replaced by `trainable` (a new array). */
  merge(theta: Float32Array, trainable: Float32Array): Float32Array {
    if (this.frozenParams === 0) return trainable;
    return this.compose(trainable, null, theta.slice());
  }

  /** The model's flat vector from its trainable and its frozen flat vectors (`frozen` null: left as `out` has it). */
  compose(trainable: Float32Array, frozen: Float32Array | null, out = new Float32Array(this.spec.params)): Float32Array {
    for (const u of this.units)
      for (const p of u.pieces) {
        const l = p.layer;
        out.set(trainable.subarray(u.offset + p.trainAt, u.offset + p.trainAt + l.size - l.frozen), l.offset + l.frozen);
        if (frozen) out.set(frozen.subarray(u.frozen.offset + p.frozenAt, u.frozen.offset + p.frozenAt + l.frozen), l.offset);
      }
    return out;
  }

  /** Unpadded trainable vector -> padded full layout. */
  pad(flat: Float32Array): Float32Array {
    return this.padInto(flat, new Float32Array(this.paddedTotal));
  }

  /** Unpadded trainable vector -> padded full layout, written into `out` (padding zeroed). */
  padInto(flat: Float32Array, out: Float32Array): Float32Array {
    for (const u of this.units) {
      out.set(flat.subarray(u.offset, u.offset + u.size), u.paddedOffset);
      out.fill(0, u.paddedOffset + u.size, u.paddedOffset + u.padded);
    }
    return out;
  }

  /** Padded full layout -> unpadded trainable vector (`frozen`: of the frozen halves). */
  unpad(full: Float32Array, frozen = false): Float32Array {
    const out = new Float32Array(frozen ? this.frozenParams : this.params);
    for (const u of this.units) {
      const h = frozen ? u.frozen : u;
      out.set(full.subarray(h.paddedOffset, h.paddedOffset + h.size), h.offset);
    }
    return out;
  }

  /** This rank's shard of an unpadded trainable vector. */
  shardOf(flat: Float32Array): Float32Array {
    return this.shardInto(flat, new Float32Array(this.shardTotal));
  }

  /** This rank's shard of an unpadded trainable vector, written into `out` (padding zeroed). */
  shardInto(flat: Float32Array, out: Float32Array): Float32Array {
    for (const u of this.units) {
      const from = u.offset + this.rank * u.shard;
      const to = Math.max(from, Math.min(u.offset + u.size, from + u.shard));
      out.set(flat.subarray(from, to), u.shardOffset);
      out.fill(0, u.shardOffset + (to - from), u.shardOffset + u.shard);
    }
    return out;
  }

  /** Put every rank's trainable shard (in rank order) back together into the unpadded trainable vector
   *  (`frozen`: the frozen halves' shards into the frozen vector). */
  assemble(shards: Float32Array[], frozen = false): Float32Array {
    if (shards.length !== this.world) throw new RangeError(`assemble: ${shards.length} shards for a world of ${this.world}`);
    const total = frozen ? this.frozenShardTotal : this.shardTotal;
    const out = new Float32Array(frozen ? this.frozenParams : this.params);
    shards.forEach((s, r) => {
      if (s.length !== total) throw new RangeError(`assemble: shard of rank ${r} has ${s.length} values, expected ${total}`);
      for (const unit of this.units) {
        const u = frozen ? unit.frozen : unit;
        const at = u.offset + r * u.shard;
        const n = Math.min(u.shard, u.offset + u.size - at);
        if (n > 0) out.set(s.subarray(u.shardOffset, u.shardOffset + n), at);
      }
    });
    return out;
  }
}
