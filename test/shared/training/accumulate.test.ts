import { describe, expect, it } from 'vitest';
import { SCHEMES } from '../../../shared/control/run-config.js';
import { SCHEME_TABLE } from '../../../shared/training/schemes/table.js';
import { memoryTheory, trafficTheory } from '../../../shared/accounting/theory.js';
import { HYPER, maxAbsDiff, trainDistributed, trainReference, type TrainSetup } from '../../helpers/train.js';

// Global batch 16 = 4 ranks x 4 micro-batches of one row, or 2 ranks x 2 micro-batches of four.
const base: TrainSetup = { widths: [13, 29, 17, 5], steps: 4, batch: 16, samples: 64, seed: 5, dtype: 'fp32', unit: 'layer', hyper: HYPER };

describe('--accumulate K: K micro-batches per optimizer step, the same update as the full batch', () => {
  const ref = trainReference(base);
  for (const [N, K] of [
    [4, 4],
    [2, 2],
  ])
    it(`N=${N}, K=${K}, fp32 wire: every scheme's losses and weights within 1e-5 of full-batch Adam; bytes and bands as theory says`, async () => {
      for (const scheme of SCHEMES) {
        const r = await trainDistributed(N, scheme, { ...base, accumulate: K });
        expect(maxAbsDiff(r.losses, ref.losses), scheme).toBeLessThanOrEqual(1e-5);
        expect(maxAbsDiff(r.final, ref.final), scheme).toBeLessThanOrEqual(1e-5);
        const flags = SCHEME_TABLE[scheme];
        const sizes = r.layouts[0].sizes();
        const want = trafficTheory(flags, sizes, 'fp32', K);
        for (const rank of r.stats)
          for (const st of rank)
            expect(
              st.records.reduce((s, x) => s + x.sent.payload, 0),
              scheme,
            ).toBe(want);
        // DP and ZeRO-1 reduce once per optimizer step; ZeRO-2 every micro-batch; ZeRO-3 gathers twice too.
        const perPass = ((N - 1) / N) * sizes.paddedTotal * 4;
        expect(want / perPass).toBeCloseTo(flags.shardParameters ? 3 * K : flags.shardGradients ? K + 1 : 2, 9);
        const theory = memoryTheory(flags, sizes, 'fp32', { gatherAhead: 0, reduceBehind: 0, accumulate: K });
        expect(r.ranks[0].ledger.live.accum ?? 0).toBe(theory.bands.accum);
        expect(theory.bands.accum).toBe((flags.shardGradients ? sizes.shardTotal : sizes.paddedTotal) * 4);
      }
    });

  it('bf16 wire: the four schemes agree on the loss within 2e-2 with K=2', async () => {
    const setup = { ...base, widths: [16, 48, 48, 4], steps: 10, batch: 32, samples: 256, dtype: 'bf16' as const, accumulate: 2 };
    const runs = [];
    for (const scheme of SCHEMES) runs.push(await trainDistributed(4, scheme, setup));
    for (const r of runs) expect(maxAbsDiff(r.losses, runs[0].losses)).toBeLessThanOrEqual(2e-2);
  });
});
