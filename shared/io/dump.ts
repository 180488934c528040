// --dump DIR: everything needed to check a run independently (PyTorch, numpy): initial parameters, the data
// set and the order of its rows, and each scheme's final parameters, as safetensors with torch-style names.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SyntheticData } from '../training/data.js';
import { modelSpec, trainingData } from '../training/model.js';
import { ALPHABET, TextData } from '../training/text-data.js';
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { serializeSafetensors, writeFileAtomic, type StTensor } from './safetensors.js';
import { toStateDict } from './state-dict.js';

export async function writeDump(dir: string, config: RunConfig, world: number, finals: Map<SchemeName, Float32Array>): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const spec = modelSpec(config);
  const meta = {
    model: spec.describe(),
    world: String(world),
    seed: String(config.seed),
    wire_dtype: config.wireDtype,
    steps: String(config.steps),
    batch: String(config.batch),
    lr: String(config.lr),
  };
  const written: string[] = [];
  const put = async (name: string, tensors: Map<string, StTensor>, extra: Record<string, string> = {}) => {
    const path = join(dir, name);
    await writeFileAtomic(path, serializeSafetensors(tensors, { ...meta, ...extra }));
    written.push(path);
  };
  await put('initial.safetensors', toStateDict(spec, spec.init(config.seed)));
  const data = trainingData(spec, config);
  const order = new Int32Array(config.steps * config.batch);
  for (let t = 0; t < config.steps; t++) order.set(data.globalRows(t, config.batch), t * config.batch);
  const batchRows: [string, StTensor] = ['batch_rows', { dtype: 'I32', shape: [config.steps, config.batch], data: order }];
  const i64 = (a: Int32Array) => BigInt64Array.from(a, (v) => BigInt(v));
  if (data instanceof SyntheticData)
    await put(
      'data.safetensors',
      new Map<string, StTensor>([
        ['x', { dtype: 'F32', shape: [config.samples, data.inputs], data: data.x }],
        ['y', { dtype: 'I64', shape: [config.samples], data: i64(data.y) }],
        batchRows,
      ]),
      { note: 'step t trains on rows batch_rows[t]; rank r of N takes the contiguous r-th 1/N of them; loss is the mean over the global batch' },
    );
  else if (data instanceof TextData)
    await put('data.safetensors', new Map<string, StTensor>([['tokens', { dtype: 'I64', shape: [data.tokens.length], data: i64(data.tokens) }], batchRows]), {
      note: 'sample i is tokens[i*seq : i*seq+seq], its targets tokens[i*seq+1 : i*seq+seq+1]; step t trains on samples batch_rows[t]; rank r of N takes the contiguous r-th 1/N; loss is the mean over every token of the global batch',
      alphabet: JSON.stringify(ALPHABET),
    });
  for (const [scheme, theta] of finals) await put(`final-${scheme}.safetensors`, toStateDict(spec, theta), { scheme });
  return written;
}
