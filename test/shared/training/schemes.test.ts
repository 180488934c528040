import { describe, expect, it } from 'vitest';
import { bytesPerElement } from '../../../shared/tensor/dtype.js';
import { SCHEMES, type SchemeName } from '../../../shared/control/run-config.js';
import { SCHEME_TABLE } from '../../../shared/training/schemes/table.js';
import { memoryTheory, trafficTheory } from '../../../shared/accounting/theory.js';
import { HYPER, maxAbsDiff, trainDistributed, trainReference, type TrainSetup } from '../../helpers/train.js';

// 13*29+29 = 406, 29*17+17 = 510, 17*5+5 = 90 parameters: none divisible by 4 or 8, so padding is exercised.
const base: TrainSetup = { widths: [13, 29, 17, 5], steps: 5, batch: 8, samples: 64, seed: 7, dtype: 'fp32', unit: 'layer', hyper: HYPER };

describe('four schemes, fp32 wire: identical to single-process full-batch Adam', () => {
  const ref = trainReference(base);
  for (const N of [1, 2, 4]) {
    it(`N=${N}: losses and final parameters of dp, zero1, zero2, zero3 within 1e-5 of the reference and of each other`, async () => {
      const finals = [];
      for (const scheme of SCHEMES) {
        const r = await trainDistributed(N, scheme, base);
        expect(maxAbsDiff(r.losses, ref.losses)).toBeLessThanOrEqual(1e-5);
        expect(maxAbsDiff(r.final, ref.final)).toBeLessThanOrEqual(1e-5);
        finals.push(r.final);
      }
      for (const f of finals) expect(maxAbsDiff(f, finals[0])).toBeLessThanOrEqual(1e-5);
    });
  }

  it('whole-model units (the seed form of ZeRO-3) give the same result', async () => {
    const r = await trainDistributed(4, 'zero3', { ...base, unit: 'model' });
    expect(maxAbsDiff(r.final, ref.final)).toBeLessThanOrEqual(1e-5);
  });
});

describe('bf16 wire', () => {
  it('the four schemes agree within 2e-2 on the loss and the loss falls', async () => {
    const setup = { ...base, widths: [16, 48, 48, 4], steps: 25, batch: 32, samples: 256, dtype: 'bf16' as const };
    const runs = [];
    for (const scheme of SCHEMES) runs.push(await trainDistributed(4, scheme, setup));
    for (const r of runs) {
      expect(maxAbsDiff(r.losses, runs[0].losses)).toBeLessThanOrEqual(2e-2);
      const first = r.losses[0];
      const lastMean = r.losses.slice(-5).reduce((a, b) => a + b, 0) / 5;
      expect(lastMean).toBeLessThan(0.8 * first);
    }
  });
});

describe('accounting: bytes on the wire and memory per band, measured against theory', () => {
  for (const dtype of ['fp32', 'bf16'] as const) {
    for (const N of [2, 4]) {
      it(`N=${N}, ${dtype}: payload per rank per step and resident bands equal theory; peaks as predicted`, async () => {
        const b = bytesPerElement(dtype);
        for (const scheme of SCHEMES) {
          const r = await trainDistributed(N, scheme, { ...base, steps: 2, dtype });
          const flags = SCHEME_TABLE[scheme];
          const L = r.layouts[0];
          const want = trafficTheory(flags, L.sizes(), dtype);
          for (const rank of r.stats) for (const st of rank) expect(st.records.reduce((s, x) => s + x.sent.payload, 0)).toBe(want);
          // DP, ZeRO-1/2 send 2(N-1)/N P b; ZeRO-3 3(N-1)/N P b.
          expect(want).toBe(((flags.shardParameters ? 3 : 2) * (N - 1) * L.paddedTotal * b) / N);

          const theory = memoryTheory(flags, L.sizes(), dtype);
          for (const rk of r.ranks) {
            const live = rk.ledger.live;
            expect({
              params16: live.params16,
              frozen16: live.frozen16,
              kept16: live.kept16,
              secondary: live.secondary,
              grads: live.grads,
              master: live.master,
              m: live.m,
              v: live.v,
              accum: live.accum,
            }).toEqual(theory.bands);
            expect(live.gathered + live.bucket + live.comm).toBe(0); // nothing transient survives a step
            expect(rk.ledger.peak).toBe(theory.peak);
          }
        }
      });
    }
  }

  it('ZeRO-3 peak exceeds resident by exactly one gathered unit (never a gathered copy held from forward to backward)', async () => {
    const r = await trainDistributed(4, 'zero3', { ...base, steps: 2 });
    const L = r.layouts[0];
    for (const rk of r.ranks) {
      expect(rk.ledger.peak).toBeGreaterThan(rk.ledger.residentBytes());
      // Keeping every unit's gathered copy for the backward pass would hold all of them at once.
      expect(rk.ledger.peakPerBand.gathered).toBe(L.maxUnitPadded * 4);
      expect(rk.ledger.peakPerBand.gathered).toBeLessThan(L.paddedTotal * 4);
    }
    // Two gathers per unit per step: a cached forward gather would show up as a missing backward gather.
    const kinds = r.stats[0][1].records.map((x) => `${x.kind} ${x.label}`);
    for (const u of L.units) {
      expect(kinds).toContain(`all-gather forward gather u${u.index}`);
      expect(kinds).toContain(`all-gather backward gather u${u.index}`);
    }
  });

  it('a ZeRO-2 rank never holds a whole-model gradient', async () => {
    const r = await trainDistributed(4, 'zero2', { ...base, steps: 2 });
    const L = r.layouts[0];
    for (const rk of r.ranks) {
      const gradPeak = rk.ledger.peakPerBand.grads + rk.ledger.peakPerBand.bucket;
      expect(gradPeak).toBeLessThan(L.paddedTotal * 4);
      expect(rk.ledger.peakPerBand.grads).toBe(L.shardTotal * 4);
    }
  });

  it('the seed table at N=8 (bf16, no padding): 16, 5.5, 3.75, 2.0 bytes per parameter resident', () => {
    const P = 8 * 1000;
    const sizes = { params: P, paddedTotal: P, shardTotal: P / 8, maxUnitPadded: P, unitPadded: [P], world: 8 };
    const per = (s: SchemeName) => memoryTheory(SCHEME_TABLE[s], sizes, 'bf16').resident / P;
    expect([per('dp'), per('zero1'), per('zero2'), per('zero3')]).toEqual([16, 5.5, 3.75, 2]);
  });
});

describe('ZeRO-3 prefetch', () => {
  for (const depth of [1, 2]) {
    it(`depth ${depth}: same losses and parameters as without; the peak holds the prefetched units, as theory says`, async () => {
      const setup = { ...base, widths: [13, 29, 17, 23, 5], steps: 3 };
      const plain = await trainDistributed(4, 'zero3', setup);
      const ahead = await trainDistributed(4, 'zero3', { ...setup, gatherAhead: depth, reduceBehind: depth });
      expect(ahead.losses).toEqual(plain.losses);
      expect(Array.from(ahead.final)).toEqual(Array.from(plain.final));
      const L = ahead.layouts[0];
      const theory = memoryTheory(SCHEME_TABLE.zero3, L.sizes(), 'fp32', { gatherAhead: depth, reduceBehind: depth });
      const window = Math.max(...L.units.map((_, i) => L.units.slice(i, i + depth + 1).reduce((a, u) => a + u.padded, 0))) * 4;
      // Gathers are scheduled deterministically; buckets in flight free as their reduce-scatters finish,
      // so the measured peak lies between the gathered window and the theory's worst case.
      expect(theory.peak - theory.resident).toBeGreaterThanOrEqual(window);
      for (const rk of ahead.ranks) {
        expect(rk.ledger.peak).toBeLessThanOrEqual(theory.peak);
        expect(rk.ledger.peak).toBeGreaterThanOrEqual(theory.resident + window);
        expect(rk.ledger.peakPerBand.gathered).toBe(window);
        expect(rk.ledger.peakPerBand.gathered).toBeGreaterThan(plain.ranks[0].ledger.peakPerBand.gathered);
      }
      // Still two gathers per unit per step, and the same bytes.
      const bytes = (r: typeof plain) => r.stats[0][1].records.reduce((s, x) => s + x.sent.payload, 0);
      expect(bytes(ahead)).toBe(bytes(plain));
    });
  }
});
