// DeepSpeed's ZeRO-3 under activation checkpointing (--recompute-regather), on real sockets: a block gathered
// for its recompute is released and gathered again for its backward pass. Each rank sends exactly the theory's
// bytes, which are plain ZeRO-3's plus one more gather of every block per micro-batch (counted here from the
// layout, not from the theory), the peak holds one gathered unit as before, and training is bit for bit the same.
import { describe, expect, it } from 'vitest';
import { bytesPerElement } from '../../../../shared/tensor/dtype.js';
import { SCHEME_TABLE } from '../../../../shared/training/schemes/table.js';
import { memoryTheory, trafficParts } from '../../../../shared/accounting/theory.js';
import { GptSpec } from '../../../../shared/models/gpt/spec.js';
import { inlineCompute } from '../../../../shared/models/registry.js';
import { HYPER, trainDistributed, type TrainSetup } from '../../../helpers/train.js';

const SHAPE = { layers: 2, dim: 16, heads: 2, seq: 8, vocab: 32 };
const N = 4;

describe('ZeRO-3 gathering a block again after its recompute', () => {
  for (const accumulate of [1, 2])
    it(
      `GPT, bf16, N=${N}, ${accumulate} micro-batch(es): socket bytes = theory = plain + one gather of the blocks, same weights`,
      { timeout: 60_000 },
      async () => {
        const spec = new GptSpec(SHAPE);
        const setup: TrainSetup = {
          widths: [],
          gpt: SHAPE,
          steps: 2,
          batch: 4 * accumulate,
          samples: 32,
          seed: 5,
          dtype: 'bf16',
          unit: 'layer',
          hyper: HYPER,
          gatherAhead: 1,
          reduceBehind: 1,
          accumulate,
          compute: (s) => inlineCompute(s, 1, true), // activation checkpointing per block
        };
        const plain = await trainDistributed(N, 'zero3', setup);
        const layout = plain.layouts[0];
        const blocks = layout.units.map((u) => u.pieces.some((p) => spec.layers[p.layer.index].kind === 'block'));
        expect(blocks.filter(Boolean)).toHaveLength(SHAPE.layers);
        const again = await trainDistributed(N, 'zero3', { ...setup, regather: blocks });
        expect(again.losses).toEqual(plain.losses);
        expect(again.final).toEqual(plain.final);

        const b = bytesPerElement('bf16');
        const sent = (t: typeof plain, r: number, step: number) => t.stats[r][step].records.reduce((s, x) => s + x.sent.payload, 0);
        // one more all-gather of each block per micro-batch: N-1 segments of its padded size over N
        const extra = accumulate * layout.units.reduce((t, u, i) => t + (blocks[i] ? (N - 1) * (u.padded / N) * b : 0), 0);
        const sizes = { ...layout.sizes(), regathered: blocks };
        for (let r = 0; r < N; r++)
          for (let step = 0; step < setup.steps; step++) {
            expect(sent(again, r, step)).toBe(sent(plain, r, step) + extra);
            expect(sent(again, r, step)).toBe(trafficParts(SCHEME_TABLE.zero3, sizes, 'bf16', accumulate).trainable);
          }
        const labels = again.stats[0][1].records.map((x) => x.label);
        expect(labels.filter((l) => l.includes('again after its recompute'))).toHaveLength(SHAPE.layers * accumulate);
        // the first gather is released before the second: the peak's gathered band is plain ZeRO-3's
        const theory = memoryTheory(SCHEME_TABLE.zero3, sizes, 'bf16', { gatherAhead: 1, reduceBehind: 1, accumulate });
        for (const [r, rk] of again.ranks.entries()) {
          expect(rk.ledger.peakBands.gathered).toBeGreaterThan(0);
          expect(rk.ledger.peakBands.gathered).toBe(plain.ranks[r].ledger.peakBands.gathered);
          expect(rk.ledger.peak).toBe(plain.ranks[r].ledger.peak);
        }
        expect(theory.peak).toBe(memoryTheory(SCHEME_TABLE.zero3, layout.sizes(), 'bf16', { gatherAhead: 1, reduceBehind: 1, accumulate }).peak);
      },
    );
});
