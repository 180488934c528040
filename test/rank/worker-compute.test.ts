// Forward and backward on a worker thread (the compiled thread entry, as a rank runs it) give exactly what
// the inline compute gives.
import { describe, expect, it } from 'vitest';
import type { ModelSpec } from '../../shared/training/model.js';
import { WorkerCompute } from '../../rank/worker-compute.js';
import { compiled } from '../helpers/cli.js';
import { HYPER, trainDistributed } from '../helpers/train.js';

describe('compute on a worker thread', () => {
  it('ZeRO-3 with prefetch 1: identical losses and parameters to inline compute', async () => {
    const setup = {
      widths: [13, 29, 17, 23, 5],
      steps: 3,
      batch: 8,
      samples: 64,
      seed: 7,
      dtype: 'fp32' as const,
      unit: 'layer' as const,
      hyper: HYPER,
      prefetch: 1,
    };
    const inline = await trainDistributed(4, 'zero3', setup);
    const threaded = await trainDistributed(4, 'zero3', {
      ...setup,
      compute: (spec: ModelSpec) => new WorkerCompute(spec, 1, compiled('rank/compute-thread.ts')),
    });
    expect(threaded.losses).toEqual(inline.losses);
    expect(Array.from(threaded.final)).toEqual(Array.from(inline.final));
  });

  it('the GPT too: ZeRO-3 with prefetch 1, bf16, identical to inline compute', async () => {
    const setup = {
      widths: [],
      gpt: { layers: 2, dim: 16, heads: 2, seq: 8, vocab: 32 },
      steps: 3,
      batch: 8,
      samples: 32,
      seed: 3,
      dtype: 'bf16' as const,
      unit: 'layer' as const,
      hyper: HYPER,
      prefetch: 1,
    };
    const inline = await trainDistributed(4, 'zero3', setup);
    const threaded = await trainDistributed(4, 'zero3', {
      ...setup,
      compute: (spec: ModelSpec) => new WorkerCompute(spec, 1, compiled('rank/compute-thread.ts')),
    });
    expect(threaded.losses).toEqual(inline.losses);
    expect(Array.from(threaded.final)).toEqual(Array.from(inline.final));
  });
});
