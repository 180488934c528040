// What the decoders' registry entries share: their data (windows of the generated text), their rows (a
// sequence each, one per rank by default), activation checkpointing.
import type { RunConfig } from '../control/run-config.js';
import type { ArenaModel } from '../training/arena-model.js';
import type { ModelSpec } from '../training/model-spec.js';
import { TextData, textVocabProblem } from '../training/text-data.js';
import type { ModelEntry } from './model-entry.js';

/** Our corpus's alphabet and a little room (text-data.ts). */
export const DEFAULT_VOCAB = 64;

type DecoderSpec = ModelSpec & { readonly shape: { seq: number; vocab: number } };
type Shared = 'arena' | 'data' | 'row' | 'recomputes' | 'defaultBatch' | 'modeledOnly';

/** Those entries' shared fields, `model` making the decoder on its kernel arena. */
export function decoderEntry<S extends DecoderSpec, C extends { arch: string; vocab: number }>(
  model: (spec: S, opts: { threads: number; recompute: boolean }) => ArenaModel,
): Pick<ModelEntry<S, C>, Shared> {
  return {
    arena: (spec, threads, recompute) => model(spec, { threads, recompute }),
    data: (spec, c: Pick<RunConfig, 'samples' | 'seed'>) => new TextData(spec.shape.seq, spec.shape.vocab, c.samples, c.seed),
    row: (spec) => ({ inputs: spec.shape.seq, labels: spec.shape.seq, noun: 'sequences' }),
    recomputes: true,
    defaultBatch: (world) => world, // one sequence per rank
    modeledOnly: (c) => textVocabProblem(c.vocab),
  };
}
