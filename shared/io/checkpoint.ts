// Sharded checkpoints: every rank writes its own optimizer state (fp32 master, m, v and the step) as
// safetensors, atomically; the coordinator then writes index.json naming every shard and its SHA-256. A
// checkpoint is complete exactly when its index exists, so a half-written one is never taken for a whole
// one; a shard whose bytes changed since (a flipped bit, a truncation, an edit) is refused, naming the file.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { AdaptSchema, ALL_SCHEMES, ModelConfigSchema, UNITS } from '../control/run-config.js';
import { int, parse } from '../control/schema.js';
import { WIRE_DTYPES } from '../tensor/dtype.js';
import { join } from 'node:path';
import { legacyModel, modelSpec } from '../models/registry.js';
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { parseSafetensors, serializeSafetensors, writeFileAtomic, type StTensor } from './safetensors.js';
import { BLOCK_BYTES, blockHashes, dataStart } from './shard-blocks.js';
import { isHybrid, SCHEME_TABLE } from '../training/schemes/table.js';
import type { OptimizerState } from '../training/adam.js';

const INDEX_FIELDS = {
  scheme: v.picklist(ALL_SCHEMES),
  step: int(1),
  world: int(1),
  adapt: v.optional(AdaptSchema), // a fine-tuning run's: the shards hold what trains (the adapters), nothing frozen
  unit: v.picklist(UNITS),
  wireDtype: v.picklist(WIRE_DTYPES),
  seed: int(0, 2 ** 32 - 1),
  sharded: v.boolean(), // false: every rank holds the whole padded model (DP)
  shardGroup: v.optional(int(2)), // hsdp: the ranks a shard group has (ranks 0..G-1 hold one whole model)
  files: v.array(v.pipe(v.string(), v.regex(/^rank-\d{5}\.safetensors$/))), // relative to the index, in rank order
  sha256: v.array(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))), // of each file, in rank order
  // of each file's header, which lists a SHA-256 per block of its data: a resharding reader reads and checks
  // only the blocks it needs (absent in checkpoints written before: those are read whole)
  headerSha256: v.optional(v.array(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)))),
};

const CheckpointIndexSchema = v.variant('format', [
  v.object({ format: v.literal('zerowire-checkpoint-3'), model: ModelConfigSchema, ...INDEX_FIELDS }),
  // written before models had named configurations: the arch (none before the GPT: an MLP) and its numbers
  v.pipe(
    v.object({
      format: v.literal('zerowire-checkpoint-2'),
      arch: v.optional(v.string(), 'mlp'),
      model: v.pipe(v.array(int(1)), v.minLength(2)),
      ...INDEX_FIELDS,
    }),
    v.transform(({ arch, model, ...rest }) => ({ ...rest, format: 'zerowire-checkpoint-3' as const, model: legacyModel(arch, model) })),
  ),
]);
export type CheckpointIndex = v.InferOutput<typeof CheckpointIndexSchema>;

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export const stepDir = (dir: string, scheme: SchemeName, step: number) => join(dir, scheme, `step-${String(step).padStart(8, '0')}`);
export const rankFile = (rank: number) => `rank-${String(rank).padStart(5, '0')}.safetensors`;

export interface WrittenShard {
  path: string;
  sha256: string; // the whole file
  headerSha256: string; // its header, with the blocks' SHA-256s in its metadata
}

/** Write this rank's shard, with a SHA-256 per BLOCK_BYTES of its data in the header's metadata; returns its
 *  path and the SHA-256s of the whole file and of its header (for the index). */
export async function writeRankShard(dir: string, scheme: SchemeName, rank: number, world: number, s: OptimizerState): Promise<WrittenShard> {
  const folder = stepDir(dir, scheme, s.step);
  await mkdir(folder, { recursive: true });
  const t = (data: Float32Array): StTensor => ({ dtype: 'F32', shape: [data.length], data });
  const tensors = new Map([
    ['master', t(s.master)],
    ['m', t(s.m)],
    ['v', t(s.v)],
  ]);
  const meta = { step: String(s.step), rank: String(rank), world: String(world), scheme };
  // The data's bytes do not depend on the header: hash them once laid out, then write the header that lists them.
  const plain = serializeSafetensors(tensors, meta);
  const blocks = blockHashes(plain.subarray(dataStart(plain)));
  const body = serializeSafetensors(tensors, { ...meta, blockBytes: String(BLOCK_BYTES), blocks });
  const path = join(folder, rankFile(rank));
  await writeFileAtomic(path, body);
  return { path, sha256: sha256(body), headerSha256: sha256(body.subarray(0, dataStart(body))) };
}

/** Rank `rank`'s shard of the checkpoint `index` describes, checked against the index's checksum. */
export async function readRankShard(
  dir: string,
  index: Pick<CheckpointIndex, 'scheme' | 'step' | 'sha256'>,
  rank: number,
  length: number,
): Promise<OptimizerState> {
  const path = join(stepDir(dir, index.scheme, index.step), rankFile(rank));
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new Error(`checkpoint ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
  if (sha256(bytes) !== index.sha256[rank])
    throw new Error(`checkpoint ${path}: its bytes do not match the SHA-256 in index.json (changed or damaged since it was written)`);
  let t: Map<string, StTensor>;
  try {
    t = parseSafetensors(bytes);
  } catch (err) {
    throw new Error(`checkpoint ${path}: ${(err as Error).message}`, { cause: err });
  }
  const get = (name: string) => {
    const x = t.get(name);
    if (!x || x.dtype !== 'F32' || x.data.length !== length) throw new Error(`checkpoint ${path}: tensor ${name} should be F32 with ${length} values`);
    return x.data as Float32Array;
  };
  return { master: get('master'), m: get('m'), v: get('v'), step: index.step };
}

export async function writeIndex(
  dir: string,
  config: RunConfig,
  world: number,
  scheme: SchemeName,
  step: number,
  checksums: string[],
  headerChecksums?: string[],
): Promise<string> {
  const sharded = SCHEME_TABLE[scheme].shardOptimizer;
  const index: CheckpointIndex = {
    format: 'zerowire-checkpoint-3',
    scheme,
    step,
    world,
    model: config.model,
    ...(config.adapt ? { adapt: config.adapt } : {}),
    unit: config.unit,
    wireDtype: config.wireDtype,
    seed: config.seed,
    sharded,
    ...(isHybrid(scheme) ? { shardGroup: config.shardGroup } : {}),
    files: Array.from({ length: world }, (_, r) => rankFile(r)),
    sha256: checksums,
    ...(headerChecksums ? { headerSha256: headerChecksums } : {}),
  };
  const path = join(stepDir(dir, scheme, step), 'index.json');
  await writeFileAtomic(path, JSON.stringify(index, null, 1));
  return path;
}

/** The newest complete checkpoint of `scheme` under dir (null if none), and the newer step folders passed
 *  over because they have no index (incomplete: a run stopped while writing them). An index that exists
 *  but is not a valid one is an error naming it: never a silent step back to an older checkpoint. */
export async function latestIndex(dir: string, scheme: SchemeName): Promise<{ index: CheckpointIndex | null; incomplete: string[] }> {
  let names: string[];
  try {
    names = await readdir(join(dir, scheme));
  } catch {
    return { index: null, incomplete: [] };
  }
  const incomplete: string[] = [];
  for (const name of names
    .filter((n) => /^step-\d+$/.test(n))
    .sort()
    .reverse()) {
    const path = join(dir, scheme, name, 'index.json');
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      incomplete.push(name);
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new Error(`checkpoint index ${path}: not JSON (${(err as Error).message})`, { cause: err });
    }
    const index = parseIndex(json, path);
    if (index.scheme !== scheme || `step-${String(index.step).padStart(8, '0')}` !== name)
      throw new Error(`checkpoint index ${path}: it describes ${index.scheme} step ${index.step}, not this folder`);
    if (index.files.length !== index.world || index.sha256.length !== index.world)
      throw new Error(`checkpoint index ${path}: ${index.files.length} files and ${index.sha256.length} checksums for a world of ${index.world}`);
    return { index, incomplete };
  }
  return { index: null, incomplete };
}

/** A checkpoint index read from `path`, checked, or an error naming the file and the field. */
export function parseIndex(json: unknown, path: string): CheckpointIndex {
  return parse(CheckpointIndexSchema, json, `checkpoint index ${path}`);
}

/** Check that a checkpoint can continue this run, naming the first difference. Resharded (another scheme or
 *  world size), only the model, the data's seed and the step must fit; as written, everything. */
export function checkResumable(index: CheckpointIndex, config: RunConfig, world: number, resharded = false): void {
  const diffs: string[] = [];
  if (index.world !== world && !resharded) diffs.push(`world ${index.world} vs ${world}`);
  const model = (c: Pick<RunConfig, 'model'>) => modelSpec(c).describe();
  if (model(index) !== model(config)) diffs.push(`model ${model(index)} vs ${model(config)}`);
  const adapt = (c: { adapt?: unknown }) => JSON.stringify(c.adapt ?? 'none');
  if (adapt(index) !== adapt(config)) diffs.push(`fine-tuning ${adapt(index)} vs ${adapt(config)}`);
  if (index.unit !== config.unit && !resharded) diffs.push(`unit ${index.unit} vs ${config.unit}`);
  if (index.wireDtype !== config.wireDtype && !resharded) diffs.push(`wire dtype ${index.wireDtype} vs ${config.wireDtype}`);
  if (index.seed !== config.seed) diffs.push(`seed ${index.seed} vs ${config.seed}`);
  if (index.step >= config.steps) diffs.push(`it is at step ${index.step}, the run ends at step ${config.steps}`);
  if (diffs.length) throw new Error(`cannot resume ${index.scheme} from its step-${index.step} checkpoint: ${diffs.join('; ')}`);
}
