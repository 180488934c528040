// Resharding at load time, like PyTorch DCP's: a checkpoint written by any scheme at any world size, read back
// as the full (unpadded) fp32 master, m and v, and cut into what a rank of another scheme at another world
// size holds. Adam's step and moments carry over exactly: only the layout changes.
import type { OptimizerState } from '../training/adam.js';
import { ShardLayout } from '../training/layout.js';
import { modelSpec } from '../models/registry.js';
import { isHybrid } from '../training/schemes/table.js';
import { rankFile, readRankShard, stepDir, type CheckpointIndex } from './checkpoint.js';
import { ShardRanges } from './shard-blocks.js';
import { join } from 'node:path';
import type { StTensor } from './safetensors.js';
import { toStateDict, trainableStateDict } from './state-dict.js';

/** What a checkpoint holds, as full unpadded vectors. */
export interface FullState {
  master: Float32Array;
  m: Float32Array;
  v: Float32Array;
  step: number;
}

type Source = Pick<CheckpointIndex, 'scheme' | 'step' | 'sha256' | 'world' | 'unit' | 'sharded' | 'model' | 'adapt' | 'shardGroup' | 'headerSha256'>;

/** A stretch of the unpadded flat vector and where it sits in a buffer (a shard file's, or a rank's). */
interface Piece {
  from: number;
  to: number;
  at: number;
}

/** What rank `rank` of `layout` holds, stretch by stretch: its slice of every unit, or the whole padded model. */
function pieces(layout: ShardLayout, rank: number, sharded: boolean): Piece[] {
  return layout.units.flatMap((u) => {
    if (!sharded) return [{ from: u.offset, to: u.offset + u.size, at: u.paddedOffset }];
    const from = u.offset + rank * u.shard;
    const to = Math.min(u.offset + u.size, from + u.shard);
    return to > from ? [{ from, to, at: u.shardOffset }] : [];
  });
}

/** The checkpoint `index` describes, cut into what a rank with `layout` holds. Shards that list block
 *  checksums are read only where they overlap that (each block read checked); older ones are read whole.
 *  Returns the state and the bytes read from disk. */
export async function readStateFor(dir: string, index: Source, layout: ShardLayout, sharded: boolean): Promise<{ state: OptimizerState; bytesRead: number }> {
  if (!index.headerSha256) {
    const full = await readFullState(dir, index);
    return { state: stateFor(full, layout, sharded), bytesRead: Number.NaN };
  }
  const old = new ShardLayout(modelSpec(index), sourceWorld(index), 0, index.unit);
  const oldLength = index.sharded ? old.shardTotal : old.paddedTotal;
  const n = sharded ? layout.shardTotal : layout.paddedTotal;
  const state: OptimizerState = { master: new Float32Array(n), m: new Float32Array(n), v: new Float32Array(n), step: index.step };
  const want = pieces(layout, layout.rank, sharded);
  let bytesRead = 0;
  for (let r = 0; r < (index.sharded ? old.world : 1); r++) {
    const overlaps = pieces(old, r, index.sharded).flatMap((src) =>
      want.flatMap((dst) => {
        const from = Math.max(src.from, dst.from);
        const to = Math.min(src.to, dst.to);
        return to > from ? [{ file: src.at + from - src.from, at: dst.at + from - dst.from, count: to - from }] : [];
      }),
    );
    if (!overlaps.length) continue; // nothing of this shard is ours: not even opened
    const shard = await ShardRanges.open(join(stepDir(dir, index.scheme, index.step), rankFile(r)), index.headerSha256[r]);
    try {
      const keys = ['master', 'm', 'v'] as const;
      await shard.read(overlaps.flatMap((o) => keys.map((k) => ({ name: k, length: oldLength, from: o.file, count: o.count, out: state[k], at: o.at }))));
    } finally {
      bytesRead += shard.bytesRead;
      await shard.close();
    }
  }
  return { state, bytesRead };
}

/** How many ranks' shards make one whole model in a checkpoint: the hybrid's group, else its world. */
function sourceWorld(index: Source): number {
  if (isHybrid(index.scheme) && !index.shardGroup)
    throw new Error(
      `checkpoint ${index.scheme} step ${index.step}: its index does not record the shard group, so it resumes only as HSDP at its own world size`,
    );
  return index.shardGroup ?? index.world;
}

/** Every shard of the checkpoint (each checked against its SHA-256), put back together. A DP checkpoint's
 *  first shard holds it all; the hybrid's first group (its index says how many ranks a group has; one written
 *  before it said so is refused). */
export async function readFullState(dir: string, index: Source): Promise<FullState> {
  const layout = new ShardLayout(modelSpec(index), sourceWorld(index), 0, index.unit);
  if (!index.sharded) {
    const s = await readRankShard(dir, index, 0, layout.paddedTotal);
    return { master: layout.unpad(s.master), m: layout.unpad(s.m), v: layout.unpad(s.v), step: s.step };
  }
  const shards: OptimizerState[] = [];
  for (let r = 0; r < layout.world; r++) shards.push(await readRankShard(dir, index, r, layout.shardTotal));
  const whole = (k: 'master' | 'm' | 'v') => layout.assemble(shards.map((s) => s[k]));
  return { master: whole('master'), m: whole('m'), v: whole('v'), step: index.step };
}

/** What a rank with `layout` holds of the full state: its shard of each unit, or the whole padded model. */
export function stateFor(full: FullState, layout: ShardLayout, sharded: boolean): OptimizerState {
  const cut = (x: Float32Array) => (sharded ? layout.shardOf(x) : layout.pad(x));
  return { master: cut(full.master), m: cut(full.m), v: cut(full.v), step: full.step };
}

/** The full model of a complete checkpoint, as torch-style named tensors (`zerowire consolidate`); of a
 *  fine-tuning run's, what trained (its adapters: the frozen base is the seed's model, not in the checkpoint). */
export async function consolidate(dir: string, index: CheckpointIndex): Promise<Map<string, StTensor>> {
  const master = (await readFullState(dir, index)).master;
  return index.adapt ? trainableStateDict(modelSpec(index), master) : toStateDict(modelSpec(index), master);
}
