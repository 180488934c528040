// The GPT's registry entry: --model gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB].
import * as v from 'valibot';
import { int } from '../../control/schema.js';
import { ConfigError } from '../../control/run-config.js';
import { decoderEntry, DEFAULT_VOCAB } from '../decoder-entry.js';
import { integerFields, refuseLlamaOptions, sequence, type ModelEntry } from '../model-entry.js';
import { Gpt } from './compute.js';
import { gptPasses } from './passes.js';
import { GptSpec, type GptShape } from './spec.js';

export interface GptConfig extends GptShape {
  arch: 'gpt';
  tied?: boolean; // the head is the token embeddings
}

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
  ...decoderEntry((spec, opts) => new Gpt(spec, opts)),
  passes: gptPasses,
  legacy: ([layers = 0, dim = 0, heads = 0, seq = 0, vocab = 0]) => ({ arch: 'gpt', layers, dim, heads, seq, vocab }),
};
