// --dump DIR: everything needed to check a run independently (PyTorch, numpy): initial parameters, the data
// set and the order of its rows, and each scheme's final parameters, as safetensors with torch-style names.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { modelSpec, trainingData } from '../models/registry.js';
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
  const { tensors, meta: about } = data.dumped();
  await put('data.safetensors', new Map<string, StTensor>([...tensors, batchRows]), about);
  for (const [scheme, theta] of finals) await put(`final-${scheme}.safetensors`, toStateDict(spec, theta), { scheme });
  return written;
}
