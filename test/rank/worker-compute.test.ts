// Forward and backward on a worker thread (the compiled thread entry, as a rank runs it) give exactly what
// the inline compute gives, for the MLP and the GPT.
import { describe, expect, it } from 'vitest';
import { WorkerCompute } from '../../rank/worker-compute.js';
import type { ModelSpec } from '../../shared/models/registry.js';
import { compiled } from '../helpers/cli.js';
import { HYPER, trainDistributed, type TrainSetup } from '../helpers/train.js';

const common = { steps: 3, batch: 8, unit: 'layer' as const, hyper: HYPER, gatherAhead: 1, reduceBehind: 1 };
const SETUPS: [string, TrainSetup][] = [
  ['the MLP, fp32', { ...common, widths: [13, 29, 17, 23, 5], samples: 64, seed: 7, dtype: 'fp32' }],
  ['the GPT, bf16', { ...common, widths: [], gpt: { layers: 2, dim: 16, heads: 2, seq: 8, vocab: 32 }, samples: 32, seed: 3, dtype: 'bf16' }],
];

describe('compute on a worker thread', () => {
  for (const [name, setup] of SETUPS)
    it(`${name}: ZeRO-3 with prefetch 1 gives identical losses and parameters to inline compute`, async () => {
      const inline = await trainDistributed(4, 'zero3', setup);
      const threaded = await trainDistributed(4, 'zero3', {
        ...setup,
        compute: (spec: ModelSpec) => new WorkerCompute(spec, 1, compiled('rank/compute-thread.ts')),
      });
      expect(threaded.losses).toEqual(inline.losses);
      expect(Array.from(threaded.final)).toEqual(Array.from(inline.final));
    });
});
