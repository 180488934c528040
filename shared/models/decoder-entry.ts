// What the decoders' registry entries share: their data (windows of the generated text), their rows (a
// sequence each, one per rank by default), activation checkpointing, and a tied head trained only modeled.
import type { RunConfig } from '../control/run-config.js';
import type { ArenaModel } from '../training/arena-model.js';
import type { ModelSpec } from '../training/model-spec.js';
import { TextData, textVocabProblem } from '../training/text-data.js';
import type { ModelEntry } from './model-entry.js';

/** Our corpus's alphabet and a little room (text-data.ts). */
export const DEFAULT_VOCAB = 64;

/** A tied head is computed only on a modeled device yet: on the CPU its weight would be two units'. */
const TIED_MODELED_ONLY = 'tied embeddings (tie_word_embeddings) train only on a modeled device yet: give --compute model:PRESET, or ask plan';

type DecoderSpec = ModelSpec & { readonly shape: { seq: number; vocab: number }; readonly tied: boolean };
type Shared = 'arena' | 'data' | 'row' | 'recomputes' | 'defaultBatch' | 'modeledOnly';

/** Those entries' shared fields, `model` making the decoder on its kernel arena. */
export function decoderEntry<S extends DecoderSpec, C extends { arch: string; vocab: number; tied?: boolean }>(
  model: (spec: S, opts: { threads: number; recompute: boolean }) => ArenaModel,
): Pick<ModelEntry<S, C>, Shared> {
  return {
    arena: (spec, threads, recompute) => {
      if (spec.tied) throw new Error(TIED_MODELED_ONLY);
      return model(spec, { threads, recompute });
    },
    data: (spec, c: Pick<RunConfig, 'samples' | 'seed'>) => new TextData(spec.shape.seq, spec.shape.vocab, c.samples, c.seed),
    row: (spec) => ({ inputs: spec.shape.seq, labels: spec.shape.seq, noun: 'sequences' }),
    recomputes: true,
    defaultBatch: (world) => world, // one sequence per rank
    modeledOnly: (c) => (c.tied ? TIED_MODELED_ONLY : textVocabProblem(c.vocab)),
  };
}
