// What a checkpoint folder holds, for `zerowire checkpoint inspect`: every scheme's step folders, complete
// (an index.json) or not, and of a complete one its model, scheme, world, step and every shard with its size,
// its SHA-256 checked against the index and its tensors' lengths checked against the layout.
import { ConfigError } from '../control/run-config.js';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ALL_SCHEMES } from '../control/run-config.js';
import { ShardLayout } from '../training/layout.js';
import { modelSpec } from '../models/registry.js';
import { parseIndex, sha256, type CheckpointIndex } from './checkpoint.js';
import { parseSafetensors } from './safetensors.js';

interface ShardReport {
  file: string;
  bytes: number | null; // null: missing
  sha256: string | null;
  problem: string | null; // null: the file is what the index says
}

export interface StepReport {
  scheme: string;
  folder: string;
  index: CheckpointIndex | null; // null: incomplete (no index.json)
  problem: string | null; // an index that cannot be read
  shards: ShardReport[];
  complete: boolean; // an index, and every shard whole
}

/** Every step folder under `dir` (a --checkpoint-dir, or one scheme's folder in it), newest first per scheme. */
export async function inspectCheckpoints(dir: string): Promise<StepReport[]> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    // A folder that is not there, or not a folder, is the caller's input: a usage error (exit 2).
    throw new ConfigError(`${dir}: cannot read it (${err.code ?? err.message})`, { cause: err });
  });
  const schemes = entries.filter((n) => (ALL_SCHEMES as readonly string[]).includes(n));
  const reports: StepReport[] = [];
  for (const scheme of schemes) {
    const steps = (await readdir(join(dir, scheme)))
      .filter((n) => /^step-\d+$/.test(n))
      .sort()
      .reverse();
    for (const folder of steps) reports.push(await inspectStep(join(dir, scheme, folder), scheme));
  }
  return reports;
}

async function inspectStep(folder: string, scheme: string): Promise<StepReport> {
  const files = (await readdir(folder)).filter((n) => /^rank-\d{5}\.safetensors$/.test(n)).sort();
  const text = await readFile(join(folder, 'index.json'), 'utf8').catch(() => null);
  if (text === null) {
    const shards = await Promise.all(files.map(async (file) => ({ file, bytes: (await stat(join(folder, file))).size, sha256: null, problem: null })));
    return { scheme, folder, index: null, problem: null, shards, complete: false };
  }
  let index: CheckpointIndex;
  try {
    index = parseIndex(JSON.parse(text), join(folder, 'index.json'));
  } catch (err) {
    return { scheme, folder, index: null, problem: (err as Error).message, shards: [], complete: false };
  }
  const spec = modelSpec(index);
  const layout = new ShardLayout(spec, index.world, 0, index.unit);
  const length = index.sharded ? layout.shardTotal : layout.paddedTotal;
  const shards = await Promise.all(index.files.map((file, r) => inspectShard(join(folder, file), file, index.sha256[r], length)));
  return { scheme, folder, index, problem: null, shards, complete: shards.every((x) => x.problem === null) };
}

async function inspectShard(path: string, file: string, expected: string, length: number): Promise<ShardReport> {
  const bytes = await readFile(path).catch(() => null);
  if (!bytes) return { file, bytes: null, sha256: null, problem: 'missing' };
  const sum = sha256(bytes);
  if (sum !== expected) return { file, bytes: bytes.length, sha256: sum, problem: 'SHA-256 differs from the index (changed or damaged)' };
  try {
    const t = parseSafetensors(bytes);
    const bad = ['master', 'm', 'v'].filter((name) => t.get(name)?.data.length !== length);
    return { file, bytes: bytes.length, sha256: sum, problem: bad.length ? `${bad.join(', ')}: not ${length} fp32 values` : null };
  } catch (err) {
    return { file, bytes: bytes.length, sha256: sum, problem: (err as Error).message };
  }
}

/** The reports as text: a line per step, a line per shard. */
export function formatInspection(dir: string, reports: StepReport[]): string {
  if (!reports.length) return `${dir}: no checkpoint here (expected <scheme>/step-NNNNNNNN/ folders, as --checkpoint-dir writes them)`;
  const lines: string[] = [];
  for (const r of reports) {
    const i = r.index;
    if (!i) {
      lines.push(`${r.folder}: ${r.problem ?? `incomplete: no index.json (${r.shards.length} shard file(s) written)`}`);
      continue;
    }
    const spec = modelSpec(i);
    lines.push(
      `${r.folder}: ${r.complete ? 'complete' : 'DAMAGED'}; ${i.scheme} at step ${i.step}, world ${i.world}, model ${spec.describe()} (${spec.params} params), unit ${i.unit}, ${i.wireDtype} wire, seed ${i.seed}, ${i.sharded ? 'optimizer states sharded over the ranks' : 'each rank holds the whole model'}`,
    );
    for (const s of r.shards) lines.push(`  ${s.file}  ${s.bytes === null ? '-' : `${s.bytes} bytes`}  sha256 ${s.sha256 ?? '-'}  ${s.problem ?? 'ok'}`);
  }
  return lines.join('\n');
}
