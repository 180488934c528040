// Phi-3's registry entry: --model phi3:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB], with --rope-theta and
// --rms-eps. Its passes are the Llama's (spec.ts says why); its entry is the Llama's with its own spec.
import * as v from 'valibot';
import { finite, int } from '../../control/schema.js';
import { ConfigError } from '../../control/run-config.js';
import { integerFields, type ModelEntry } from '../model-entry.js';
import { DEFAULT_VOCAB } from '../decoder-entry.js';
import { LLAMA, type LlamaConfig } from '../llama/entry.js';
import { llamaShapeProblem, RMS_EPS, ROPE_THETA } from '../llama/spec.js';
import { Phi3Spec } from './spec.js';

export interface Phi3Config extends Omit<LlamaConfig, 'arch' | 'qkvBias' | 'tied'> {
  arch: 'phi3';
}

const USAGE = 'phi3:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB] (e.g. phi3:2,64,4,4,172,32)';

/** The Llama's configuration of a Phi-3's (what its own options are read on). */
const asLlama = (c: Phi3Config): LlamaConfig => ({ ...c, arch: 'llama' });

export const PHI3: ModelEntry<Phi3Spec, Phi3Config> = {
  schema: v.object({ layers: int(1), dim: int(1), heads: int(1), kvHeads: int(1), ff: int(1), seq: int(1), vocab: int(1), ropeTheta: finite, rmsEps: finite }),
  usage: USAGE,
  parse: (text) => {
    const m = /^phi3:(.*)$/i.exec(text);
    if (!m) return null;
    const n = integerFields(m[1], 6, 7);
    if (!n) throw new ConfigError(`--model: "${text}" must be ${USAGE.split(' ')[0]} with positive integers, e.g. phi3:2,64,4,4,172,32`);
    const [layers, dim, heads, kvHeads, ff, seq, vocab = DEFAULT_VOCAB] = n;
    const problem = llamaShapeProblem({ layers, dim, heads, kvHeads, ff, seq, vocab });
    if (problem) throw new ConfigError(`--model: "${text}": ${problem}`);
    return { arch: 'phi3', layers, dim, heads, kvHeads, ff, seq, vocab, ropeTheta: ROPE_THETA, rmsEps: RMS_EPS };
  },
  spec: ({ layers, dim, heads, kvHeads, ff, seq, vocab, ropeTheta, rmsEps }, adapt) =>
    new Phi3Spec({ layers, dim, heads, kvHeads, ff, seq, vocab }, { ropeTheta, rmsEps }, adapt),
  config: (spec) => ({ arch: 'phi3', ...spec.shape, ropeTheta: spec.ropeTheta, rmsEps: spec.rmsEps }),
  // the Llama's passes, data, rows and options: the same block (spec.ts)
  arena: (spec, threads, recompute) => LLAMA.arena(spec, threads, recompute),
  data: (spec, c) => LLAMA.data(spec, c),
  row: (spec) => LLAMA.row(spec),
  passes: (spec) => LLAMA.passes(spec),
  recomputes: LLAMA.recomputes,
  defaultBatch: (world) => LLAMA.defaultBatch(world),
  modeledOnly: (c) => LLAMA.modeledOnly(asLlama(c)),
  tune: (c, o) => ({ ...LLAMA.tune!(asLlama(c), o), arch: 'phi3' }),
  legacy: () => {
    throw new ConfigError('phi3: no checkpoint of the older format holds one (it came after them)');
  },
};
