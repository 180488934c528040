// Resharding at load time, like PyTorch DCP's: a checkpoint written by any scheme at any world size, read back
// as the full (unpadded) fp32 master, m and v, and cut into what a rank of another scheme at another world
// size holds. Adam's step and moments carry over exactly: only the layout changes.
import type { OptimizerState } from '../training/adam.js';
import { ShardLayout } from '../training/layout.js';
import { modelSpec } from '../training/model.js';
import { readRankShard, type CheckpointIndex } from './checkpoint.js';

/** What a checkpoint holds, as full unpadded vectors. */
export interface FullState {
  master: Float32Array;
  m: Float32Array;
  v: Float32Array;
  step: number;
}

type Source = Pick<CheckpointIndex, 'scheme' | 'step' | 'sha256' | 'world' | 'unit' | 'sharded' | 'arch' | 'model'>;

/** Every shard of the checkpoint (each checked against its SHA-256), put back together. A DP checkpoint's
 *  first shard holds it all. The hybrid's are refused: its index does not say how its ranks were grouped. */
export async function readFullState(dir: string, index: Source): Promise<FullState> {
  if (index.scheme === 'hsdp') throw new Error(`checkpoint ${index.scheme} step ${index.step}: an HSDP checkpoint resumes only as HSDP at its own world size`);
  const layout = new ShardLayout(modelSpec(index), index.world, 0, index.unit);
  if (!index.sharded) {
    const s = await readRankShard(dir, index, 0, layout.paddedTotal);
    return { master: layout.unpad(s.master), m: layout.unpad(s.m), v: layout.unpad(s.v), step: s.step };
  }
  const shards: OptimizerState[] = [];
  for (let r = 0; r < index.world; r++) shards.push(await readRankShard(dir, index, r, layout.shardTotal));
  const whole = (k: 'master' | 'm' | 'v') => layout.assemble(shards.map((s) => s[k]));
  return { master: whole('master'), m: whole('m'), v: whole('v'), step: index.step };
}

/** What a rank with `layout` holds of the full state: its shard of each unit, or the whole padded model. */
export function stateFor(full: FullState, layout: ShardLayout, sharded: boolean): OptimizerState {
  const cut = (x: Float32Array) => (sharded ? layout.shardOf(x) : layout.pad(x));
  return { master: cut(full.master), m: cut(full.m), v: cut(full.v), step: full.step };
}
