// A what-if rank's collectives (SyntheticCollectives, on extents: no values) put the same frames on the wire as
// the real ones: same count, same sizes, same payload and envelope bytes, for every collective and an uneven length.
import { afterEach, describe, expect, it } from 'vitest';
import type { CollectiveRecord } from '../../../shared/collectives/record.js';
import { extentOf } from '../../../shared/tensor/extent.js';
import { emptyOf, paddedLength, type WireDtype } from '../../../shared/tensor/dtype.js';
import { localRings, type LocalRank } from '../../helpers/rings.js';

let real: LocalRank[] = [];
let fake: LocalRank[] = [];
afterEach(async () => {
  await Promise.all([...real, ...fake].map((r) => r.close()));
  real = fake = [];
});

type Kind = 'reduceScatter' | 'allGather' | 'allReduce';

/** Run one collective of `n` elements on every rank, with real arrays or with extents. */
async function run(kind: Kind, n: number, dtype: WireDtype, synthetic: boolean): Promise<CollectiveRecord[]> {
  const ranks = synthetic ? fake : real;
  const N = ranks.length;
  const S = paddedLength(n, N) / N;
  const make = (len: number) => (synthetic ? extentOf(dtype, len) : emptyOf(dtype, len));
  return Promise.all(
    ranks.map(({ coll }) => {
      if (kind === 'reduceScatter') return coll.reduceScatter(make(n), make(S));
      if (kind === 'allGather') return coll.allGather(make(S), make(n));
      return coll.allReduce(make(n));
    }),
  );
}

describe('synthetic collectives', () => {
  it('with --link-scale K carry 1/K of each segment, rounded up', async () => {
    fake = await localRings(3, { chunkBytes: 4096, linkScale: 7, synthetic: true });
    const n = 30_000; // segments of 10,000 elements: 1,429 on the wire
    for (const kind of ['reduceScatter', 'allGather', 'allReduce'] as const) {
      const sent = await run(kind, n, 'bf16', true);
      const passes = kind === 'allReduce' ? 2 : 1;
      for (const r of sent) expect(r.sent.payload, kind).toBe(passes * 2 * Math.ceil(10_000 / 7) * 2);
    }
  });

  for (const kind of ['reduceScatter', 'allGather', 'allReduce'] as const)
    for (const n of [4096 * 3, 10_001])
      it(`${kind} of ${n} elements sends what the real one sends`, async () => {
        [real, fake] = await Promise.all([localRings(3, { chunkBytes: 4096 }), localRings(3, { chunkBytes: 4096, synthetic: true })]);
        for (const dtype of ['bf16', 'fp32'] as const) {
          const real = await run(kind, n, dtype, false);
          const synthetic = await run(kind, n, dtype, true);
          for (let r = 0; r < real.length; r++) {
            expect(synthetic[r].sent.payload, `rank ${r} ${dtype}`).toBe(real[r].sent.payload);
            expect(synthetic[r].sent.envelope).toBe(real[r].sent.envelope);
            expect(synthetic[r].recv.payload).toBe(real[r].recv.payload);
            expect(synthetic[r].sent.payload).toBeGreaterThan(0);
          }
        }
      });
});
