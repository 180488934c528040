// DeepSpeed's stage3_param_persistence_threshold on ZeRO-3, on real sockets: the persisted tensors are never
// gathered (the bytes each rank sends equal the theory's, rank by rank: every gather without them, one
// all-gather of them after the update), the band that keeps them whole is as large as the theory says, and
// training is bit for bit ZeRO-3's without a threshold.
import { describe, expect, it } from 'vitest';
import { bytesPerElement } from '../../../shared/tensor/dtype.js';
import { SCHEME_TABLE } from '../../../shared/training/schemes/table.js';
import { memoryTheory, trafficParts, trafficTheory } from '../../../shared/accounting/theory.js';
import { persistedLayout } from '../../../shared/training/persisted-layout.js';
import { HYPER, sizesWith, trainDistributed, type TrainSetup } from '../../helpers/train.js';

// An MLP (biases of 29, 17 and 5 persist at 32; its weights do not) and a GPT (every norm and bias persists at
// 64 = 4D; embeddings, attention and MLP weights do not).
const MLP: TrainSetup = { widths: [13, 29, 17, 5], steps: 3, batch: 8, samples: 64, seed: 3, dtype: 'fp32', unit: 'layer', hyper: HYPER };
const GPT: TrainSetup = { ...MLP, gpt: { layers: 2, dim: 16, heads: 2, seq: 8, vocab: 32 }, batch: 4, samples: 32 };

describe('ZeRO-3 with persisted parameters', () => {
  for (const [name, setup, threshold] of [
    ['MLP', MLP, 32],
    ['GPT', GPT, 64],
  ] as const)
    for (const dtype of ['fp32', 'bf16'] as const)
      it(`${name}, ${dtype}, N=4: socket bytes = theory rank by rank, kept band = theory, weights = plain ZeRO-3's`, { timeout: 60_000 }, async () => {
        const s = { ...setup, dtype, gatherAhead: 1, reduceBehind: 1 };
        const plain = await trainDistributed(4, 'zero3', s);
        const kept = await trainDistributed(4, 'zero3', { ...s, persist: threshold });
        expect(kept.losses).toEqual(plain.losses);
        expect(kept.final).toEqual(plain.final);

        const layout = kept.layouts[0];
        const p = persistedLayout(layout, threshold);
        expect(p.keptTotal).toBeGreaterThan(0);
        const sizes = sizesWith(layout, 'zero3', threshold);
        const b = bytesPerElement(dtype);
        kept.stats.forEach((steps, r) => {
          for (const st of steps)
            expect(st.records.reduce((t, x) => t + x.sent.payload, 0)).toBe(trafficParts(SCHEME_TABLE.zero3, sizes, dtype, 1, 1, undefined, r).trainable);
        });
        // The mean over ranks, as the report has it; less than plain ZeRO-3 sends
        const mean = (t: typeof kept) => t.stats.reduce((u, steps) => u + steps[1].records.reduce((w, x) => w + x.sent.payload, 0), 0) / 4;
        expect(mean(kept)).toBeCloseTo(trafficTheory(SCHEME_TABLE.zero3, sizes, dtype), 6);
        expect(mean(kept)).toBeLessThan(mean(plain));
        const theory = memoryTheory(SCHEME_TABLE.zero3, sizes, dtype);
        for (const rk of kept.ranks) {
          expect(rk.ledger.live.kept16).toBe(p.keptTotal * b);
          expect(rk.ledger.live.kept16).toBe(theory.bands.kept16);
          expect(rk.ledger.live.params16).toBe(theory.bands.params16);
        }
        const labels = kept.stats[0][1].records.map((x) => x.label);
        expect(labels.some((l) => l.startsWith('persisted u'))).toBe(true);
      });
});
