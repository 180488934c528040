// The GPT's registry entry: --model gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB].
import * as v from 'valibot';
import { int } from '../../control/schema.js';
import { ConfigError } from '../../control/run-config.js';
import { TextData, textVocabProblem } from '../../training/text-data.js';
import { integerFields, type ModelEntry } from '../model-entry.js';
import { Gpt } from './compute.js';
import { gptPasses } from './passes.js';
import { GptSpec, type GptShape } from './spec.js';

export interface GptConfig extends GptShape {
  arch: 'gpt';
}

/** Our corpus's alphabet and a little room (text-data.ts). */
export const DEFAULT_VOCAB = 64;

export const GPT: ModelEntry<GptSpec, GptConfig> = {
  schema: v.object({ layers: int(1), dim: int(1), heads: int(1), seq: int(1), vocab: int(1) }),
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
  spec: ({ layers, dim, heads, seq, vocab }, adapt) => new GptSpec({ layers, dim, heads, seq, vocab }, adapt),
  config: (spec) => ({ arch: 'gpt', ...spec.shape }),
  arena: (spec, threads, recompute) => new Gpt(spec, { threads, recompute }),
  data: (spec, c) => new TextData(spec.shape.seq, spec.shape.vocab, c.samples, c.seed),
  row: (spec) => ({ inputs: spec.shape.seq, labels: spec.shape.seq, noun: 'sequences' }),
  passes: gptPasses,
  recomputes: true,
  defaultBatch: (world) => world, // one sequence per rank
  realDataProblem: (c) => textVocabProblem(c.vocab),
  legacy: ([layers = 0, dim = 0, heads = 0, seq = 0, vocab = 0]) => ({ arch: 'gpt', layers, dim, heads, seq, vocab }),
};
