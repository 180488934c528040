// Sharded checkpoints: every rank writes its own optimizer state (fp32 master, m, v and the step) as
// safetensors, atomically; the coordinator then writes index.json naming every shard. A checkpoint is
// complete exactly when its index exists, so a half-written one is never taken for a whole one.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ShardLayout } from '../training/layout.js';
import { MlpSpec } from '../training/mlp.js';
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { parseSafetensors, serializeSafetensors, writeFileAtomic, type StTensor } from './safetensors.js';
import { SCHEME_TABLE } from '../training/schemes/table.js';
import type { OptimizerState } from '../training/adam.js';
import { toStateDict } from './state-dict.js';

export interface CheckpointIndex {
  format: 'zerowire-checkpoint-1';
  scheme: SchemeName;
  step: number;
  world: number;
  model: number[];
  unit: RunConfig['unit'];
  wireDtype: RunConfig['wireDtype'];
  seed: number;
  sharded: boolean; // false: every rank holds the whole padded model (DP); the index names rank 0 only
  files: string[]; // relative to the index, in rank order
}

const stepDir = (dir: string, scheme: SchemeName, step: number) => join(dir, scheme, `step-${String(step).padStart(8, '0')}`);
const rankFile = (rank: number) => `rank-${String(rank).padStart(5, '0')}.safetensors`;

export async function writeRankShard(dir: string, scheme: SchemeName, rank: number, world: number, s: OptimizerState): Promise<string> {
  const folder = stepDir(dir, scheme, s.step);
  await mkdir(folder, { recursive: true });
  const t = (data: Float32Array): StTensor => ({ dtype: 'F32', shape: [data.length], data });
  const body = serializeSafetensors(
    new Map([
      ['master', t(s.master)],
      ['m', t(s.m)],
      ['v', t(s.v)],
    ]),
    { step: String(s.step), rank: String(rank), world: String(world), scheme },
  );
  const path = join(folder, rankFile(rank));
  await writeFileAtomic(path, body);
  return path;
}

export async function readRankShard(dir: string, scheme: SchemeName, step: number, rank: number, length: number): Promise<OptimizerState> {
  const path = join(stepDir(dir, scheme, step), rankFile(rank));
  const t = parseSafetensors(await readFile(path));
  const get = (name: string) => {
    const x = t.get(name);
    if (!x || x.dtype !== 'F32' || x.data.length !== length) throw new Error(`checkpoint ${path}: tensor ${name} should be F32 with ${length} values`);
    return x.data as Float32Array;
  };
  return { master: get('master'), m: get('m'), v: get('v'), step };
}

export async function writeIndex(dir: string, config: RunConfig, world: number, scheme: SchemeName, step: number): Promise<string> {
  const sharded = SCHEME_TABLE[scheme].shardOptimizer;
  const index: CheckpointIndex = {
    format: 'zerowire-checkpoint-1',
    scheme,
    step,
    world,
    model: config.model,
    unit: config.unit,
    wireDtype: config.wireDtype,
    seed: config.seed,
    sharded,
    files: Array.from({ length: world }, (_, r) => rankFile(r)),
  };
  const path = join(stepDir(dir, scheme, step), 'index.json');
  await writeFileAtomic(path, JSON.stringify(index, null, 1));
  return path;
}

/** The newest complete checkpoint of `scheme` under dir, or null. */
export async function latestIndex(dir: string, scheme: SchemeName): Promise<CheckpointIndex | null> {
  let names: string[];
  try {
    names = await readdir(join(dir, scheme));
  } catch {
    return null;
  }
  for (const name of names
    .filter((n) => /^step-\d+$/.test(n))
    .sort()
    .reverse()) {
    try {
      return JSON.parse(await readFile(join(dir, scheme, name, 'index.json'), 'utf8')) as CheckpointIndex;
    } catch {
      /* no index: incomplete, look further back */
    }
  }
  return null;
}

/** Check that a checkpoint can continue this run, naming the first difference. */
export function checkResumable(index: CheckpointIndex, config: RunConfig, world: number): void {
  const diffs: string[] = [];
  if (index.world !== world) diffs.push(`world ${index.world} vs ${world}`);
  if (index.model.join(',') !== config.model.join(',')) diffs.push(`model ${index.model.join(',')} vs ${config.model.join(',')}`);
  if (index.unit !== config.unit) diffs.push(`unit ${index.unit} vs ${config.unit}`);
  if (index.wireDtype !== config.wireDtype) diffs.push(`wire dtype ${index.wireDtype} vs ${config.wireDtype}`);
  if (index.seed !== config.seed) diffs.push(`seed ${index.seed} vs ${config.seed}`);
  if (index.step >= config.steps) diffs.push(`it is at step ${index.step}, the run ends at step ${config.steps}`);
  if (diffs.length) throw new Error(`cannot resume ${index.scheme} from its step-${index.step} checkpoint: ${diffs.join('; ')}`);
}

/** The full model of a complete checkpoint, as torch-style named tensors. */
export async function consolidate(dir: string, index: CheckpointIndex): Promise<Map<string, StTensor>> {
  const spec = new MlpSpec(index.model);
  const layout = new ShardLayout(spec, index.world, 0, index.unit);
  const len = index.sharded ? layout.shardTotal : layout.paddedTotal;
  if (!index.sharded) return toStateDict(spec, layout.unpad((await readRankShard(dir, index.scheme, index.step, 0, len)).master));
  const shards = [];
  for (let r = 0; r < index.world; r++) shards.push((await readRankShard(dir, index.scheme, index.step, r, len)).master);
  return toStateDict(spec, layout.assemble(shards));
}
