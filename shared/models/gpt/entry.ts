// The GPT's registry entry: --model gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB].
import * as v from 'valibot';
import { int } from '../../control/schema.js';
import { ConfigError } from '../../control/run-config.js';
import { TextData, textVocabProblem } from '../../training/text-data.js';
import { integerFields, refuseLlamaOptions, sequence, type ModelEntry } from '../model-entry.js';
import { Gpt } from './compute.js';
import { gptPasses } from './passes.js';
import { GptSpec, type GptShape } from './spec.js';

export interface GptConfig extends GptShape {
  arch: 'gpt';
  tied?: boolean; // the head is the token embeddings
}

/** A tied head is computed only on a modeled device yet: on the CPU its weight would be two units'. */
export const TIED_MODELED_ONLY = 'tied embeddings (tie_word_embeddings) train only on a modeled device yet: give --compute model:PRESET, or ask plan';

/** Our corpus's alphabet and a little room (text-data.ts). */
export const DEFAULT_VOCAB = 64;

export const GPT: ModelEntry<GptSpec, GptConfig> = {
  schema: v.object({ layers: int(1), dim: int(1), heads: int(1), seq: int(1), vocab: int(1), tied: v.optional(v.boolean()) }),
  usage: 'gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB] (e.g. gpt:2,64,4,32)',
  parse: (text) => {
    const m = /^gpt:(.*)$/i.exec(text);
    if (!m) return null;
    const n = integerFields(m[1], 4, 5);
    if (!n) throw new ConfigError(`--model: "${text}" must be gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB] with positive integers, e.g. gpt:2,64,4,32`);
    const [layers, dim, heads, seq, vocab = DEFAULT_VOCAB] = n;
    if (dim % heads !== 0) throw new ConfigError(`--model: "${text}": DIM ${dim} does not divide into ${heads} heads`);
    return { arch: 'gpt', layers, dim, heads, seq, vocab };
  },
  spec: ({ layers, dim, heads, seq, vocab, tied }, adapt) => new GptSpec({ layers, dim, heads, seq, vocab }, adapt, tied),
  config: (spec) => ({ arch: 'gpt', ...spec.shape, ...(spec.tied ? { tied: true } : {}) }),
  tune: (c, o) => {
    refuseLlamaOptions(o);
    return { ...c, seq: sequence(o, c.seq) };
  },
  arena: (spec, threads, recompute) => {
    if (spec.tied) throw new Error(TIED_MODELED_ONLY);
    return new Gpt(spec, { threads, recompute });
  },
  data: (spec, c) => new TextData(spec.shape.seq, spec.shape.vocab, c.samples, c.seed),
  row: (spec) => ({ inputs: spec.shape.seq, labels: spec.shape.seq, noun: 'sequences' }),
  passes: gptPasses,
  recomputes: true,
  defaultBatch: (world) => world, // one sequence per rank
  modeledOnly: (c) => (c.tied ? TIED_MODELED_ONLY : textVocabProblem(c.vocab)),
  legacy: ([layers = 0, dim = 0, heads = 0, seq = 0, vocab = 0]) => ({ arch: 'gpt', layers, dim, heads, seq, vocab }),
};
