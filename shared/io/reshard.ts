// Resharding at load time, like PyTorch DCP's: a checkpoint written by any scheme at any world size, read back
// as the full (unpadded) fp32 master, m and v, and cut into what a rank of another scheme at another world
// size holds. Adam's step and moments carry over exactly: only the layout changes.
import type { OptimizerState } from '../training/adam.js';
import { ShardLayout } from '../training/layout.js';
import { modelSpec } from '../training/model.js';
import { readRankShard, type CheckpointIndex } from './checkpoint.js';
import type { StTensor } from './safetensors.js';
import { toStateDict } from './state-dict.js';

/** What a checkpoint holds, as full unpadded vectors. */
export interface FullState {
  master: Float32Array;
  m: Float32Array;
  v: Float32Array;
  step: number;
}

type Source = Pick<CheckpointIndex, 'scheme' | 'step' | 'sha256' | 'world' | 'unit' | 'sharded' | 'arch' | 'model' | 'shardGroup'>;

/** Every shard of the checkpoint (each checked against its SHA-256), put back together. A DP checkpoint's
 *  first shard holds it all; the hybrid's first group (its index says how many ranks a group has; one written
 *  before it said so is refused). */
export async function readFullState(dir: string, index: Source): Promise<FullState> {
  if (index.scheme === 'hsdp' && !index.shardGroup)
    throw new Error(
      `checkpoint ${index.scheme} step ${index.step}: its index does not record the shard group, so it resumes only as HSDP at its own world size`,
    );
  const layout = new ShardLayout(modelSpec(index), index.shardGroup ?? index.world, 0, index.unit);
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

/** The full model of a complete checkpoint, as torch-style named tensors (`zerowire consolidate`). */
export async function consolidate(dir: string, index: CheckpointIndex): Promise<Map<string, StTensor>> {
  return toStateDict(modelSpec(index), (await readFullState(dir, index)).master);
}
