// The one seam between the models a run can train and everything else: the MLP (--model 512,1024,512,10),
// the GPT-style decoder (--model gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB]) and the Llama-style one
// (--model llama:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB]). Each is an entry of MODELS, which
// says how to build its spec, its compute (inline or on a thread), its data and its batch rows. Nothing
// outside this file and the models' own files asks which model it has; a new model is a new entry.
import type { RunConfig } from '../control/run-config.js';
import type { ArenaModel } from './arena-model.js';
import type { Adaptation } from './adapters.js';
import { InlineCompute, type Compute } from './compute.js';
import { SyntheticData, type TrainingData } from './data.js';
import { GptSpec } from './gpt.js';
import { Gpt } from './gpt-compute.js';
import { Llama } from './llama-compute.js';
import { LlamaSpec } from './llama.js';
import { Mlp, MlpSpec } from './mlp.js';
import { TextData } from './text-data.js';

export type ModelSpec = MlpSpec | GptSpec | LlamaSpec;
type Arch = ModelSpec['kind'];

interface ModelKind<S extends ModelSpec> {
  /** The spec from a run config's numbers, and those numbers back (what a compute thread rebuilds it from). */
  spec(numbers: readonly number[], adapt?: Adaptation): S;
  numbers(spec: S): number[];
  /** Forward and backward on the calling thread. */
  inline(spec: S, threads: number, recompute: boolean): Compute;
  /** The model itself on its kernel arena: what a compute thread runs. */
  arena(spec: S, threads: number, recompute: boolean): ArenaModel;
  /** What it trains on. */
  data(spec: S, c: Pick<RunConfig, 'samples' | 'seed'>): TrainingData;
  /** What one row of a batch holds, and what a row is called in the report. */
  row(spec: S): { inputs: number; labels: number; noun: string };
  /** Whether it can recompute activations in the backward pass (--recompute). */
  recomputes: boolean;
  /** `plan`'s global batch when none is given. */
  defaultBatch(world: number): number;
}

const MLP: ModelKind<MlpSpec> = {
  spec: (numbers, adapt) => new MlpSpec(numbers, adapt),
  numbers: (spec) => [...spec.widths],
  inline: (spec, threads) => new InlineCompute(new Mlp(spec, { threads })),
  arena: (spec, threads) => new Mlp(spec, { threads }),
  data: (spec, c) => new SyntheticData(spec.inputs, spec.classes, c.samples, c.seed),
  row: (spec) => ({ inputs: spec.inputs, labels: 1, noun: 'rows' }),
  recomputes: false,
  defaultBatch: () => 64,
};

const GPT: ModelKind<GptSpec> = {
  spec: ([layers = 0, dim = 0, heads = 0, seq = 0, vocab = 0], adapt) => new GptSpec({ layers, dim, heads, seq, vocab }, adapt),
  numbers: ({ shape: { layers, dim, heads, seq, vocab } }) => [layers, dim, heads, seq, vocab],
  inline: (spec, threads, recompute) => new InlineCompute(new Gpt(spec, { threads, recompute })),
  arena: (spec, threads, recompute) => new Gpt(spec, { threads, recompute }),
  data: (spec, c) => new TextData(spec.shape.seq, spec.shape.vocab, c.samples, c.seed),
  row: (spec) => ({ inputs: spec.shape.seq, labels: spec.shape.seq, noun: 'sequences' }),
  recomputes: true,
  defaultBatch: (world) => world, // one sequence per rank
};

const LLAMA: ModelKind<LlamaSpec> = {
  // [L, D, H, KV, FF, T, V, rope theta, 1/rms eps]: the two options ride in the numbers (a compute thread
  // rebuilds the spec from them), eps as its whole reciprocal (1e-5 -> 100000).
  spec: ([layers = 0, dim = 0, heads = 0, kvHeads = 0, ff = 0, seq = 0, vocab = 0, ropeTheta, rmsInverse], adapt) =>
    new LlamaSpec({ layers, dim, heads, kvHeads, ff, seq, vocab }, { ropeTheta, rmsEps: rmsInverse && 1 / rmsInverse }, adapt),
  numbers: ({ shape: { layers, dim, heads, kvHeads, ff, seq, vocab }, ropeTheta, rmsEps }) => [
    layers,
    dim,
    heads,
    kvHeads,
    ff,
    seq,
    vocab,
    ropeTheta,
    Math.round(1 / rmsEps),
  ],
  inline: (spec, threads, recompute) => new InlineCompute(new Llama(spec, { threads, recompute })),
  arena: (spec, threads, recompute) => new Llama(spec, { threads, recompute }),
  data: (spec, c) => new TextData(spec.shape.seq, spec.shape.vocab, c.samples, c.seed),
  row: (spec) => ({ inputs: spec.shape.seq, labels: spec.shape.seq, noun: 'sequences' }),
  recomputes: true,
  defaultBatch: (world) => world, // one sequence per rank
};

const MODELS: { [A in Arch]: ModelKind<Extract<ModelSpec, { kind: A }>> } = { mlp: MLP, gpt: GPT, llama: LLAMA };

/** The entry of a spec's model (one lookup, no branch). */
export function modelKind(spec: ModelSpec): ModelKind<ModelSpec> {
  return MODELS[spec.kind] as unknown as ModelKind<ModelSpec>;
}

/** The model of a run config (or a checkpoint index): its arch, its numbers and how it is fine-tuned. */
export function modelSpec(c: Pick<RunConfig, 'arch' | 'model'> & { adapt?: Adaptation }): ModelSpec {
  return MODELS[c.arch].spec(c.model, c.adapt);
}

/** The run config's arch, numbers and adaptation of a spec. */
export function modelConfig(spec: ModelSpec): Pick<RunConfig, 'arch' | 'model' | 'adapt'> {
  return { arch: spec.kind, model: modelKind(spec).numbers(spec), ...(spec.adapt ? { adapt: spec.adapt } : {}) };
}

/** Forward and backward on the calling thread. */
export function inlineCompute(spec: ModelSpec, threads = 1, recompute = false): Compute {
  return modelKind(spec).inline(spec, threads, recompute);
}

/** What the model trains on: labelled synthetic rows for the MLP, windows of a generated text for the GPT. */
export function trainingData(spec: ModelSpec, c: Pick<RunConfig, 'samples' | 'seed'>): TrainingData {
  return modelKind(spec).data(spec, c);
}

/** --recompute is for models that can recompute activations; others refuse it. */
export function checkRecompute(spec: ModelSpec, recompute: boolean): string | null {
  return recompute && !modelKind(spec).recomputes ? '--recompute: activation checkpointing is per transformer block; give a --model gpt:...' : null;
}
