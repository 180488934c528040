// The two models a run can train, behind what the schemes, the accounting and the files need of a model:
// the MLP (--model 512,1024,512,10) and the GPT-style decoder (--model gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB]).
import type { RunConfig } from '../control/run-config.js';
import { InlineCompute, type Compute } from './compute.js';
import { SyntheticData, type TrainingData } from './data.js';
import { GptSpec } from './gpt.js';
import { GptCompute } from './gpt-compute.js';
import { MlpSpec } from './mlp.js';
import { TextData } from './text-data.js';

export type ModelSpec = MlpSpec | GptSpec;

/** The model of a run config (or a checkpoint index): its arch and its numbers. */
export function modelSpec(c: Pick<RunConfig, 'arch' | 'model'>): ModelSpec {
  if (c.arch === 'gpt') {
    const [layers, dim, heads, seq, vocab] = c.model;
    return new GptSpec({ layers, dim, heads, seq, vocab });
  }
  return new MlpSpec(c.model);
}

/** Forward and backward on the calling thread. */
export function inlineCompute(spec: ModelSpec, threads = 1, recompute = false): Compute {
  return spec.kind === 'gpt' ? new GptCompute(spec, threads, recompute) : new InlineCompute(spec, threads);
}

/** What the model trains on: labelled synthetic rows for the MLP, windows of a generated text for the GPT. */
export function trainingData(spec: ModelSpec, c: Pick<RunConfig, 'samples' | 'seed'>): TrainingData {
  return spec.kind === 'gpt'
    ? new TextData(spec.shape.seq, spec.shape.vocab, c.samples, c.seed)
    : new SyntheticData(spec.inputs, spec.classes, c.samples, c.seed);
}
