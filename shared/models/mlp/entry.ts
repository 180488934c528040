// The MLP's registry entry: --model 512,1024,512,10 (layer widths, input first).
import * as v from 'valibot';
import { int } from '../../control/schema.js';
import { ConfigError } from '../../control/run-config.js';
import type { ModelEntry } from '../model-entry.js';
import { integerFields } from '../model-entry.js';
import { MlpData } from './data.js';
import { Mlp, MlpSpec } from './mlp.js';
import { mlpPasses } from './passes.js';

export interface MlpConfig {
  arch: 'mlp';
  widths: number[]; // input first, classes last
}

export const MLP: ModelEntry<MlpSpec, MlpConfig> = {
  schema: v.object({ widths: v.pipe(v.array(int(1)), v.minLength(2, 'at least two widths (input and output)')) }),
  usage: 'WIDTHS (at least two positive integer layer widths, e.g. 64,256,256,10)',
  parse: (text) => {
    if (!/^[\d\s,.+-]+$/.test(text)) return null;
    const widths = integerFields(text, 2, Infinity);
    if (!widths) throw new ConfigError(`--model: "${text}" must be at least two positive integer layer widths (e.g. 64,256,256,10)`);
    return { arch: 'mlp', widths };
  },
  spec: (c, adapt) => new MlpSpec(c.widths, adapt),
  config: (spec) => ({ arch: 'mlp', widths: [...spec.widths] }),
  arena: (spec, threads) => new Mlp(spec, { threads }),
  data: (spec, c) => new MlpData(spec.inputs, spec.classes, c.samples, c.seed),
  row: (spec) => ({ inputs: spec.inputs, labels: 1, noun: 'rows' }),
  passes: mlpPasses,
  recomputes: false,
  defaultBatch: () => 64,
  modeledOnly: () => null,
  legacy: (widths) => ({ arch: 'mlp', widths }),
};
