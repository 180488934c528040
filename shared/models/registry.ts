// The one seam between the models a run can train and everything else. Each model is a folder
// (models/<name>/: its configuration, spec, CPU compute, GPU passes and entry) and one line of MODELS; the
// rest of the code asks this file, never which model it has.
import * as v from 'valibot';
import { ConfigError, type RunConfig } from '../control/run-config.js';
import { issueText } from '../control/schema.js';
import type { Adaptation } from '../training/adapters.js';
import type { ArenaModel } from '../training/arena-model.js';
import { InlineCompute, type Compute } from '../training/compute.js';
import type { TrainingData } from '../training/data.js';
import type { ModelSpec } from '../training/model-spec.js';
import type { GpuModel } from '../whatif/model-passes.js';
import { refuseLlamaOptions, type ModelConfig, type ModelEntry, type ModelOptions } from './model-entry.js';
import { NAMED_SHAPES } from './named-shapes.js';
import { GPT } from './gpt/entry.js';
import { LLAMA } from './llama/entry.js';
import { MLP } from './mlp/entry.js';
import { PHI3 } from './phi3/entry.js';

export type { ModelSpec } from '../training/model-spec.js';
export type { ModelConfig } from './model-entry.js';

/** Every model by its arch, the order `--model` tries them in. */
const MODELS: Readonly<Record<string, ModelEntry<ModelSpec, ModelConfig>>> = { mlp: MLP, gpt: GPT, llama: LLAMA, phi3: PHI3 };

function entry(arch: string): ModelEntry<ModelSpec, ModelConfig> {
  const e = Object.hasOwn(MODELS, arch) ? MODELS[arch] : undefined;
  if (!e) throw new ConfigError(`model: "${arch}" is not a model zerowire trains (${Object.keys(MODELS).join(', ')})`);
  return e;
}

/** A model's configuration checked against its own schema: errors name the field (`model.heads`). */
function checkModelConfig(raw: { arch: string }): RunConfig['model'] {
  const r = v.safeParse(entry(raw.arch).schema, raw, { abortEarly: true });
  if (!r.success) throw new ConfigError(`model.${issueText(r.issues[0])}`);
  return { ...r.output, arch: raw.arch };
}

/** The spec of a run config's model (or a checkpoint's), with its adaptation. */
export function modelSpec(c: { model: RunConfig['model']; adapt?: Adaptation }): ModelSpec {
  return entry(c.model.arch).spec(checkModelConfig(c.model), c.adapt);
}

/** The run config's model and adaptation of a spec. */
export function modelConfig(spec: ModelSpec): Pick<RunConfig, 'model' | 'adapt'> {
  return { model: { ...entry(spec.kind).config(spec) }, ...(spec.adapt ? { adapt: spec.adapt } : {}) };
}

/** A checkpoint index written before configurations were named (format 2): its arch and numbers. */
export const legacyModel = (arch: string, numbers: number[]): RunConfig['model'] => ({ ...entry(arch).legacy(numbers) });

/** --model's text: a named shape (llama3-8b), ARCH:FIELDS of a decoder, or an MLP's widths. */
export function parseModel(text: string): RunConfig['model'] {
  const t = String(text).trim();
  const named = NAMED_SHAPES[t.toLowerCase()];
  if (named) return { ...named };
  for (const e of Object.values(MODELS)) {
    const c = e.parse(t);
    if (c) return { ...c };
  }
  throw new ConfigError(`--model: "${text}" must be ${modelUsage()}`);
}

/** Every way to write --model, for the help and the errors. */
export function modelUsage(): string {
  return `${Object.values(MODELS)
    .map((e) => e.usage)
    .join('; ')}; or a named shape: ${Object.keys(NAMED_SHAPES).join(', ')}`;
}

/** A model's own options (--seq, --rope-theta, --rms-eps) onto its configuration; refused for a model without them. */
export function tuneModel(c: RunConfig['model'], o: ModelOptions): RunConfig['model'] {
  const tune = entry(c.arch).tune;
  if (tune) return { ...tune(c, o) };
  refuseLlamaOptions(o);
  if (o.seq !== undefined) throw new ConfigError(`--seq: only for a decoder (gpt:..., llama:..., a named shape or --hf-config)`);
  return c;
}

/** Why a configuration trains only on a modeled device (--compute model:PRESET: no values), or null. */
export const modeledOnly = (c: ModelConfig): string | null => entry(c.arch).modeledOnly(c);

/** The model on its kernel arena: what a compute thread runs. */
export const arenaModel = (spec: ModelSpec, threads: number, recompute: boolean): ArenaModel => entry(spec.kind).arena(spec, threads, recompute);

/** Forward and backward on the calling thread. */
export function inlineCompute(spec: ModelSpec, threads = 1, recompute = false): Compute {
  return new InlineCompute(arenaModel(spec, threads, recompute));
}

/** What the model trains on: labelled synthetic rows for the MLP, windows of a generated text for a decoder. */
export const trainingData = (spec: ModelSpec, c: Pick<RunConfig, 'samples' | 'seed'>): TrainingData => entry(spec.kind).data(spec, c);

/** What one row of a batch holds, and what the report calls a row. */
export const batchRow = (spec: ModelSpec): { inputs: number; labels: number; noun: string } => entry(spec.kind).row(spec);

/** `plan`'s global batch when none is given. */
export const defaultBatch = (spec: ModelSpec, world: number): number => entry(spec.kind).defaultBatch(world);

/** The spec with its GPU passes: what the what-if's cost model reads. */
export const gpuModel = (spec: ModelSpec): GpuModel => ({ spec, gpu: entry(spec.kind).passes(spec) });

/** --recompute is for models that can recompute activations; others refuse it. */
export function checkRecompute(spec: ModelSpec, recompute: boolean): string | null {
  return recompute && !entry(spec.kind).recomputes
    ? '--recompute: activation checkpointing is per transformer block; give a --model gpt:... or llama:...'
    : null;
}
