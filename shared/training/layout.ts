// How the flat parameter vector is cut into units (the granularity of one ZeRO-3 all-gather) and sharded.
// Each unit is padded to a multiple of the world size on its own, like an FSDP flat parameter, so that
// rank r owns slice r of every unit. Full-size buffers use the padded layout; shards concatenate the owned
// slices of all units.
import type { ModelSpec } from './model.js';
import type { ParamGroup } from './param-group.js';
import type { UnitMode } from '../control/run-config.js';

/** Sizes the accounting needs; a ShardLayout provides them, and `plan` builds them from a bare count. */
export interface LayoutSizes {
  params: number; // unpadded
  paddedTotal: number; // full-size buffers
  shardTotal: number; // one rank's shard
  maxUnitPadded: number; // the largest unit (one gather, one gradient bucket)
  unitPadded: number[]; // every unit, padded
  world: number;
}

export interface Unit {
  index: number;
  layers: ParamGroup[]; // consecutive parameter groups computed with this unit's parameters
  offset: number; // start in the unpadded flat vector
  size: number; // parameters in the unit
  shard: number; // ceil(size / world): what each rank owns
  padded: number; // shard * world
  paddedOffset: number; // start in the padded full layout
  shardOffset: number; // start inside a rank's shard
}

export class ShardLayout {
  readonly units: Unit[];
  readonly paddedTotal: number;
  readonly shardTotal: number;

  constructor(
    readonly spec: ModelSpec,
    readonly world: number,
    readonly rank: number,
    readonly mode: UnitMode,
  ) {
    if (!Number.isInteger(world) || world < 1) throw new RangeError(`world size must be a positive integer, got ${world}`);
    if (!Number.isInteger(rank) || rank < 0 || rank >= world) throw new RangeError(`rank ${rank} is not in 0..${world - 1}`);
    const groups = mode === 'layer' ? spec.layers.map((l) => [l]) : [spec.layers];
    let paddedOffset = 0;
    let shardOffset = 0;
    this.units = groups.map((layers, index) => {
      const offset = layers[0].offset;
      const size = layers.reduce((s, l) => s + l.size, 0);
      const shard = Math.ceil(size / world);
      const u = { index, layers, offset, size, shard, padded: shard * world, paddedOffset, shardOffset };
      paddedOffset += u.padded;
      shardOffset += shard;
      return u;
    });
    this.paddedTotal = paddedOffset;
    this.shardTotal = shardOffset;
  }

  get params(): number {
    return this.spec.params;
  }

  /** Where this rank's slice of unit `u` sits in the padded full layout. */
  ownOffset(u: Unit): number {
    return u.paddedOffset + this.rank * u.shard;
  }

  /** The largest unit, padded: what one gathered unit or one gradient bucket holds. */
  get maxUnitPadded(): number {
    return Math.max(...this.units.map((u) => u.padded));
  }

  /** The sizes the theory needs. */
  sizes(): LayoutSizes {
    return {
      params: this.params,
      paddedTotal: this.paddedTotal,
      shardTotal: this.shardTotal,
      maxUnitPadded: this.maxUnitPadded,
      unitPadded: this.units.map((u) => u.padded),
      world: this.world,
    };
  }

  /** Unpadded flat vector -> padded full layout. */
  pad(flat: Float32Array): Float32Array {
    return this.padInto(flat, new Float32Array(this.paddedTotal));
  }

  /** Unpadded flat vector -> padded full layout, written into `out` (padding zeroed). */
  padInto(flat: Float32Array, out: Float32Array): Float32Array {
    for (const u of this.units) {
      out.set(flat.subarray(u.offset, u.offset + u.size), u.paddedOffset);
      out.fill(0, u.paddedOffset + u.size, u.paddedOffset + u.padded);
    }
    return out;
  }

  /** Padded full layout -> unpadded flat vector. */
  unpad(full: Float32Array): Float32Array {
    const out = new Float32Array(this.params);
    for (const u of this.units) out.set(full.subarray(u.paddedOffset, u.paddedOffset + u.size), u.offset);
    return out;
  }

  /** This rank's shard of an unpadded flat vector. */
  shardOf(flat: Float32Array): Float32Array {
    return this.shardInto(flat, new Float32Array(this.shardTotal));
  }

  /** This rank's shard of an unpadded flat vector, written into `out` (padding zeroed). */
  shardInto(flat: Float32Array, out: Float32Array): Float32Array {
    for (const u of this.units) {
      const from = u.offset + this.rank * u.shard;
      const to = Math.max(from, Math.min(u.offset + u.size, from + u.shard));
      out.set(flat.subarray(from, to), u.shardOffset);
      out.fill(0, u.shardOffset + (to - from), u.shardOffset + u.shard);
    }
    return out;
  }

  /** Put every rank's shard (in rank order) back together into the unpadded flat vector. */
  assemble(shards: Float32Array[]): Float32Array {
    if (shards.length !== this.world) throw new RangeError(`assemble: ${shards.length} shards for a world of ${this.world}`);
    const out = new Float32Array(this.params);
    shards.forEach((s, r) => {
      if (s.length !== this.shardTotal) throw new RangeError(`assemble: shard of rank ${r} has ${s.length} values, expected ${this.shardTotal}`);
      for (const u of this.units) {
        const at = u.offset + r * u.shard;
        const n = Math.min(u.shard, u.offset + u.size - at);
        if (n > 0) out.set(s.subarray(u.shardOffset, u.shardOffset + n), at);
      }
    });
    return out;
  }
}
