// The GPT under all four schemes, on in-process ranks joined by real loopback sockets: with fp32 on the
// wire every scheme ends where single-process full-batch Adam does, for N = 1..4; ZeRO-3 gathers each
// block twice and holds one gathered block at a time; with bf16 the schemes agree and the loss falls.
import { describe, expect, it } from 'vitest';
import { SCHEMES } from '../../../shared/control/run-config.js';
import { trafficTheory } from '../../../shared/accounting/theory.js';
import { SCHEME_TABLE } from '../../../shared/training/schemes/table.js';
import { HYPER, maxAbsDiff, trainDistributed, trainReference, type TrainSetup } from '../../helpers/train.js';

// 2 blocks of width 16 (2 heads), 8 tokens of context, vocabulary 32; 12 sequences divide over 1..4 ranks.
const base: TrainSetup = {
  widths: [],
  gpt: { layers: 2, dim: 16, heads: 2, seq: 8, vocab: 32 },
  steps: 3,
  batch: 12,
  samples: 48,
  seed: 5,
  dtype: 'fp32',
  unit: 'layer',
  hyper: HYPER,
};

describe('GPT, four schemes, fp32 wire: identical to single-process full-batch Adam', () => {
  const ref = trainReference(base);
  for (const N of [1, 2, 3, 4]) {
    it(`N=${N}: losses and final parameters of dp, zero1, zero2, zero3 within 1e-5 of the reference`, async () => {
      for (const scheme of SCHEMES) {
        const r = await trainDistributed(N, scheme, base);
        expect(maxAbsDiff(r.losses, ref.losses), `${scheme} losses`).toBeLessThanOrEqual(1e-5);
        expect(maxAbsDiff(r.final, ref.final), `${scheme} parameters`).toBeLessThanOrEqual(1e-5);
      }
    });
  }

  it('ZeRO-3 gathers every block twice a step (1.5x the bytes of DP) and holds one gathered block at a time', async () => {
    const z3 = await trainDistributed(4, 'zero3', { ...base, steps: 2 });
    const L = z3.layouts[0];
    expect(L.units.map((u) => u.layers[0].index)).toEqual([0, 1, 2, 3]); // embeddings, block 0, block 1, head
    const kinds = z3.stats[0][1].records.map((x) => `${x.kind} ${x.label}`);
    for (const u of L.units) {
      expect(kinds).toContain(`all-gather forward gather u${u.index}`);
      expect(kinds).toContain(`all-gather backward gather u${u.index}`);
    }
    const sent = (st: (typeof z3.stats)[number][number]) => st.records.reduce((t, x) => t + x.sent.payload, 0);
    expect(sent(z3.stats[0][1])).toBe(trafficTheory(SCHEME_TABLE.zero3, L.sizes(), 'fp32'));
    const dp = await trainDistributed(4, 'dp', { ...base, steps: 2 });
    expect(sent(z3.stats[0][1]) / sent(dp.stats[0][1])).toBeCloseTo(1.5, 10);
    for (const rk of z3.ranks) {
      expect(rk.ledger.peakPerBand.gathered).toBe(L.maxUnitPadded * 4); // one block, the largest unit
      expect(rk.ledger.peak).toBe(rk.ledger.residentBytes() + L.maxUnitPadded * 4);
    }
  });

  it('activations are the same on every scheme: ZeRO does not shrink them', async () => {
    const got = [];
    for (const scheme of SCHEMES) got.push((await trainDistributed(2, scheme, { ...base, steps: 1 })).ranks[0].ledger.peakPerBand.activations);
    expect(new Set(got).size).toBe(1);
    expect(got[0]).toBeGreaterThan(0);
  });
});

describe('GPT, bf16 wire', () => {
  it('the four schemes agree within 2e-2 on the loss and the loss falls', async () => {
    const setup = { ...base, steps: 30, batch: 16, samples: 64, dtype: 'bf16' as const };
    const runs = [];
    for (const scheme of SCHEMES) runs.push(await trainDistributed(4, scheme, setup));
    for (const r of runs) {
      expect(maxAbsDiff(r.losses, runs[0].losses)).toBeLessThanOrEqual(2e-2);
      const lastMean = r.losses.slice(-5).reduce((a, b) => a + b, 0) / 5;
      expect(lastMean).toBeLessThan(0.8 * r.losses[0]);
    }
  });
});

describe('the generated text', () => {
  it('is learnable: 150 steps of full-batch Adam take the loss from ln(30) to well below it', () => {
    const { losses } = trainReference({
      ...base,
      gpt: { layers: 2, dim: 32, heads: 4, seq: 16, vocab: 32 },
      steps: 150,
      batch: 8,
      samples: 512,
      hyper: { ...HYPER, lr: 3e-3 },
    });
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(`loss: first ${losses[0].toFixed(3)}, last 20 steps ${mean(losses.slice(-20)).toFixed(3)}`);
    expect(losses[0]).toBeGreaterThan(3);
    expect(mean(losses.slice(-20))).toBeLessThan(2.2);
  });
});
