import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { gradientBuckets } from '../../../shared/training/buckets.js';
import { ShardLayout } from '../../../shared/training/layout.js';
import { MlpSpec } from '../../../shared/models/mlp/mlp.js';
import { requireTorch } from '../../helpers/torch.js';
import { HYPER, maxAbsDiff, trainDistributed, trainReference, type TrainSetup } from '../../helpers/train.js';

// Units padded for N=4, fp32: 408, 512 and 92 elements = 1632, 2048 and 368 bytes.
const base: TrainSetup = { widths: [13, 29, 17, 5], steps: 4, batch: 8, samples: 64, seed: 11, dtype: 'fp32', unit: 'layer', hyper: HYPER };
const layout = new ShardLayout(new MlpSpec(base.widths), 4, 0, 'layer');
const indices = (cap: number) => gradientBuckets(layout.units, cap, 4).map((b) => b.map((u) => u.index));

describe('DDP buckets: whole units in reverse order, each closed once it reaches its cap', () => {
  it('a model smaller than one bucket is one bucket, last unit first', () => {
    expect(indices(25 << 20)).toEqual([[2, 1, 0]]);
  });
  it('units fill a bucket until one reaches its cap, that unit included; the next starts a new one', () => {
    expect(indices(2000)).toEqual([[2, 1], [0]]);
    expect(indices(2500)).toEqual([[2, 1, 0]]); // 368 + 2048 is short of 2500
  });
  it('a unit that reaches the cap alone closes its bucket', () => {
    expect(indices(300)).toEqual([[2], [1], [0]]);
  });
  it('the first bucket is capped at 1 MiB even when the cap is larger: the default MLP reduces its last two layers first', () => {
    const big = new ShardLayout(new MlpSpec([512, 1024, 512, 10]), 2, 0, 'layer');
    expect(gradientBuckets(big.units, 25 << 20, 2).map((b) => b.map((u) => u.index))).toEqual([[2, 1], [0]]);
  });
  it('a cap that is not positive is refused', () => {
    expect(() => gradientBuckets(layout.units, 0, 4)).toThrow(/bucket cap must be positive/);
  });
  // The limits are ours (a first bucket of 1 MiB or the cap if smaller; PyTorch keeps 1 MiB even then): what is
  // checked is how buckets fill and close.
  it("equals PyTorch's own bucket assignment given one tensor per unit, in the order they become ready", (ctx) => {
    requireTorch(ctx, "PyTorch's bucket assignment");
    const cases = [
      { widths: [512, 1024, 512, 10], world: 4, bytes: 4, cap: 25 << 20 },
      { widths: [512, 1024, 512, 10], world: 4, bytes: 2, cap: 25 << 20 },
      { widths: [64, 700, 300, 900, 40, 7], world: 3, bytes: 4, cap: 400_000 },
      { widths: [13, 29, 17, 5], world: 4, bytes: 4, cap: 2000 },
    ];
    for (const c of cases) {
      const units = new ShardLayout(new MlpSpec(c.widths), c.world, 0, 'layer').units;
      const ready = [...units].reverse().map((u) => u.padded);
      const py = [
        'import json, sys, torch, torch.distributed as dist',
        'sizes, nbytes, cap = json.loads(sys.argv[1])',
        'dtype = torch.float32 if nbytes == 4 else torch.bfloat16',
        'buckets, _ = dist._compute_bucket_assignment_by_size([torch.empty(n, dtype=dtype) for n in sizes], [min(dist._DEFAULT_FIRST_BUCKET_BYTES, cap), cap])',
        'print(json.dumps(buckets))',
      ].join('\n');
      const r = spawnSync('/usr/bin/python3', ['-c', py, JSON.stringify([ready, c.bytes, c.cap])], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      // PyTorch's indices are positions in the ready order; ours are units: position k is unit (units - 1 - k).
      const torchBuckets = (JSON.parse(r.stdout) as number[][]).map((b) => b.map((k) => units.length - 1 - k));
      expect(
        gradientBuckets(units, c.cap, c.bytes).map((b) => b.map((u) => u.index)),
        JSON.stringify(c),
      ).toEqual(torchBuckets);
    }
  });
});

describe('DP and ZeRO-1 with buckets, fp32 wire: identical to single-process Adam, overlap on or off', () => {
  const ref = trainReference(base);
  for (const scheme of ['dp', 'zero1'] as const)
    for (const bucketBytes of [300, 2000, 25 << 20])
      for (const overlap of [true, false])
        it(`${scheme}, cap ${bucketBytes} B, overlap ${overlap ? 'on' : 'off'}: weights within 1e-5, each bucket's reductions together, in order`, async () => {
          const r = await trainDistributed(4, scheme, { ...base, bucketBytes, overlap });
          expect(maxAbsDiff(r.final, ref.final)).toBeLessThanOrEqual(1e-5);
          const buckets = gradientBuckets(r.layouts[0].units, bucketBytes, 4);
          for (const st of r.stats[0]) {
            const grads = st.records.filter((x) => x.label.startsWith('grad'));
            const labels = [...new Set(grads.map((x) => x.label.split(' ')[1]))];
            expect(labels).toEqual(buckets.map((_, i) => `b${i}`));
            if (scheme === 'dp') expect(grads.every((x) => x.kind === 'all-reduce')).toBe(true);
            // The first bucket's reduction starts when its last unit is written, before the next unit's backward
            // pass begins; with overlap off it has also ended by then.
            if (buckets.length === 1) continue;
            const closing = buckets[0][buckets[0].length - 1];
            const next = st.units.find((u) => u.pass === 'backward' && u.unit === closing.index - 1)!;
            const first = grads[0];
            expect(first.startMs).toBeLessThan(next.start);
            if (!overlap) expect(first.startMs + first.ms).toBeLessThanOrEqual(next.start);
          }
        });
});

describe('bf16 wire: buckets reduce unit by unit, so DP sums exactly as the sharded schemes do', () => {
  it('DP, ZeRO-1 and ZeRO-2 losses are identical, not merely close, with buckets of several units', async () => {
    const setup = { ...base, widths: [16, 48, 48, 4], steps: 8, batch: 32, samples: 256, dtype: 'bf16' as const, bucketBytes: 25 << 20 };
    const [dp, z1, z2] = [await trainDistributed(4, 'dp', setup), await trainDistributed(4, 'zero1', setup), await trainDistributed(4, 'zero2', setup)];
    expect(dp.losses).toEqual(z2.losses);
    expect(z1.losses).toEqual(z2.losses);
  });
});
