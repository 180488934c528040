// The Llama's registry entry: --model llama:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB], with --rope-theta and
// --rms-eps.
import * as v from 'valibot';
import { finite, int } from '../../control/schema.js';
import { ConfigError } from '../../control/run-config.js';
import { integerFields, sequence, type ModelEntry } from '../model-entry.js';
import { decoderEntry, DEFAULT_VOCAB } from '../decoder-entry.js';
import { Llama } from './compute.js';
import { llamaPasses } from './passes.js';
import { LlamaSpec, llamaShapeProblem, RMS_EPS, ROPE_THETA, type LlamaOptions, type LlamaShape } from './spec.js';

export interface LlamaConfig
  extends LlamaShape, Pick<LlamaOptions, 'ropeTheta' | 'rmsEps'>, Partial<Pick<LlamaOptions, 'qkvBias' | 'tied' | 'headDim' | 'qkNorm'>> {
  arch: 'llama';
}

export const LLAMA: ModelEntry<LlamaSpec, LlamaConfig> = {
  schema: v.object({
    layers: int(1),
    dim: int(1),
    heads: int(1),
    kvHeads: int(1),
    ff: int(1),
    seq: int(1),
    vocab: int(1),
    ropeTheta: v.pipe(finite, v.minValue(2)),
    rmsEps: v.pipe(finite, v.gtValue(0), v.maxValue(0.1)),
    qkvBias: v.optional(v.boolean()),
    tied: v.optional(v.boolean()),
    headDim: v.optional(int(1)), // a config's head_dim where it is not DIM/HEADS (Qwen3's)
    qkNorm: v.optional(v.boolean()),
  }),
  usage: 'llama:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB] (e.g. llama:2,64,4,2,172,32)',
  parse: (text) => {
    const m = /^llama:(.*)$/i.exec(text);
    if (!m) return null;
    const n = integerFields(m[1], 6, 7);
    if (!n)
      throw new ConfigError(`--model: "${text}" must be llama:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB] with positive integers, e.g. llama:2,64,4,2,172,32`);
    const [layers, dim, heads, kvHeads, ff, seq, vocab = DEFAULT_VOCAB] = n;
    const problem = llamaShapeProblem({ layers, dim, heads, kvHeads, ff, seq, vocab });
    if (problem) throw new ConfigError(`--model: "${text}": ${problem}`);
    return { arch: 'llama', layers, dim, heads, kvHeads, ff, seq, vocab, ropeTheta: ROPE_THETA, rmsEps: RMS_EPS };
  },
  spec: ({ layers, dim, heads, kvHeads, ff, seq, vocab, ropeTheta, rmsEps, qkvBias, tied, headDim, qkNorm }, adapt) =>
    new LlamaSpec({ layers, dim, heads, kvHeads, ff, seq, vocab }, { ropeTheta, rmsEps, qkvBias, tied, headDim, qkNorm }, adapt),
  config: (spec) => ({
    ...{ arch: 'llama' as const, ...spec.shape, ropeTheta: spec.ropeTheta, rmsEps: spec.rmsEps },
    ...(spec.qkvBias ? { qkvBias: true } : {}),
    ...(spec.tied ? { tied: true } : {}),
    ...(spec.headDim !== spec.shape.dim / spec.shape.heads ? { headDim: spec.headDim } : {}),
    ...(spec.qkNorm ? { qkNorm: true } : {}),
  }),
  ...decoderEntry((spec, opts) => new Llama(spec, opts)),
  passes: llamaPasses,
  // [L, D, H, KV, FF, T, V, rope theta, 1/rms eps]
  legacy: ([layers = 0, dim = 0, heads = 0, kvHeads = 0, ff = 0, seq = 0, vocab = 0, ropeTheta = ROPE_THETA, inverse = 0]) => ({
    ...{ arch: 'llama' as const, layers, dim, heads, kvHeads, ff, seq, vocab },
    ...{ ropeTheta, rmsEps: inverse ? 1 / inverse : RMS_EPS },
  }),
  tune: (c, o) => {
    const ropeTheta = o.ropeTheta ?? c.ropeTheta;
    if (!(Number.isFinite(ropeTheta) && ropeTheta >= 2)) throw new ConfigError(`--rope-theta: ${o.ropeTheta} must be a number of at least 2 (10000, 500000)`);
    const rmsEps = o.rmsEps ?? c.rmsEps;
    if (!(rmsEps > 0 && rmsEps <= 0.1)) throw new ConfigError(`--rms-eps: ${o.rmsEps} must be a small positive number (1e-5, 1e-6)`);
    return { ...c, ropeTheta, rmsEps, seq: sequence(o, c.seq) };
  },
};
