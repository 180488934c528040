import { afterEach, describe, expect, it } from 'vitest';
import { decodeBf16, encodeBf16 } from '../../../shared/tensor/bf16.js';
import { paddedLength } from '../../../shared/tensor/dtype.js';
import { closeAll, localRings, type LocalRank } from '../../helpers/rings.js';

let open: LocalRank[] = [];
afterEach(async () => {
  await closeAll(open);
  open = [];
});

/** Small integers: every partial sum is exact in fp32, so ring order cannot matter and equality is exact. */
function ints(rank: number, n: number): Float32Array {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = ((i * 7 + rank * 13) % 61) - 30;
  return x;
}

function directSum(world: number, n: number): Float32Array {
  const s = new Float32Array(n);
  for (let r = 0; r < world; r++) {
    const x = ints(r, n);
    for (let i = 0; i < n; i++) s[i] += x[i];
  }
  return s;
}

const WORLDS = [1, 2, 3, 4, 8];
const lengths = (N: number) => [...new Set([0, 1, Math.max(1, N - 1), 1009])];

describe('ring collectives, fp32, exact', () => {
  for (const N of WORLDS) {
    it(`N=${N}: all-reduce, reduce-scatter, all-gather for lengths 0, 1, N-1, prime`, async () => {
      open = await localRings(N, { chunkBytes: 256 }); // small chunks: many chunks per segment
      for (const L of lengths(N)) {
        const want = directSum(N, L);
        const bufs = open.map((_, r) => ints(r, L));
        await Promise.all(open.map((rk, r) => rk.coll.allReduce(bufs[r])));
        for (const b of bufs) expect(Array.from(b)).toEqual(Array.from(want));

        const S = paddedLength(L, N) / N;
        const shards = open.map(() => new Float32Array(S));
        await Promise.all(open.map((rk, r) => rk.coll.reduceScatter(ints(r, L), shards[r])));
        for (let r = 0; r < N; r++) {
          const expected = new Float32Array(S);
          expected.set(want.subarray(r * S, Math.min(L, (r + 1) * S)));
          expect(Array.from(shards[r])).toEqual(Array.from(expected));
        }

        const outs = open.map(() => new Float32Array(L));
        await Promise.all(open.map((rk, r) => rk.coll.allGather(shards[r], outs[r])));
        for (const o of outs) expect(Array.from(o)).toEqual(Array.from(want));
      }
    });
  }

  it('1M elements, 4 ranks: exact sums; payload bytes sent per rank equal (N-1)/N * padded * 4, frame overhead < 0.5%', async () => {
    const N = 4;
    const L = 1_000_003; // not a multiple of 4: padding travels and is counted
    open = await localRings(N);
    const bufs = open.map((_, r) => ints(r, L));
    const recs = await Promise.all(open.map((rk, r) => rk.coll.allReduce(bufs[r])));
    const want = directSum(N, L);
    for (const b of bufs) expect(b).toEqual(want);
    const padded = paddedLength(L, N);
    for (const rec of recs) {
      expect(rec.padded).toBe(padded);
      expect(rec.sent.payload).toBe((2 * (N - 1) * padded * 4) / N);
      expect(rec.recv.payload).toBe(rec.sent.payload);
      const overhead = (rec.sent.frame - rec.sent.payload) / rec.sent.payload;
      expect(overhead).toBeGreaterThan(0);
      expect(overhead).toBeLessThan(0.005);
    }
    const rs = await Promise.all(open.map((rk, r) => rk.coll.reduceScatter(ints(r, L), new Float32Array(padded / N))));
    for (const rec of rs) expect(rec.sent.payload).toBe(((N - 1) * padded * 4) / N);
    const ag = await Promise.all(open.map((rk) => rk.coll.allGather(new Float32Array(padded / N), new Float32Array(L))));
    for (const rec of ag) expect(rec.sent.payload).toBe(((N - 1) * padded * 4) / N);
  });

  it('N=1 moves no bytes and returns the input', async () => {
    open = await localRings(1);
    const x = ints(0, 10);
    const rec = await open[0].coll.allReduce(x);
    expect(Array.from(x)).toEqual(Array.from(ints(0, 10)));
    expect(rec.sent).toEqual({ payload: 0, envelope: 0, frame: 0 });
  });

  it('a barrier returns on no rank before the last one has entered it', async () => {
    for (const N of [2, 3, 4]) {
      const ranks = await localRings(N, { chunkBytes: 64 });
      let lateEntered = 0;
      const late = new Promise<void>((resolve) => setTimeout(resolve, 150)).then(() => {
        lateEntered = performance.now();
        return ranks[N - 1].coll.barrier();
      });
      const left = await Promise.all(ranks.slice(0, N - 1).map((rk) => rk.coll.barrier().then(() => performance.now())));
      await late;
      for (const t of left) expect(t).toBeGreaterThanOrEqual(lateEntered);
      await closeAll(ranks);
    }
  });
});

describe('ring collectives, bf16 on the wire', () => {
  it('all-reduce of random values lies within the documented bound of the exact sum', async () => {
    for (const N of [2, 4, 8]) {
      const ranks = await localRings(N, { chunkBytes: 512 });
      const L = 4099;
      const f32 = ranks.map((_, r) => {
        const x = new Float32Array(L);
        for (let i = 0; i < L; i++) x[i] = Math.sin(i * 0.37 + r) * (1 + (i % 5));
        return x;
      });
      const bits = f32.map((x) => {
        const b = new Uint16Array(L);
        encodeBf16(x, b);
        return b;
      });
      // Exact sum of the bf16 inputs (what each rank contributes), and of their magnitudes.
      const exact = new Float64Array(L);
      const mag = new Float64Array(L);
      for (const b of bits) {
        const v = new Float32Array(L);
        decodeBf16(b, v);
        for (let i = 0; i < L; i++) {
          exact[i] += v[i];
          mag[i] += Math.abs(v[i]);
        }
      }
      await Promise.all(ranks.map((rk, r) => rk.coll.allReduce(bits[r])));
      const out = new Float32Array(L);
      decodeBf16(bits[0], out);
      // Bound: each of the N-1 hops plus the final rounding rounds a partial sum to bf16 (rel. error 2^-8 each).
      const u = 2 ** -8;
      for (let i = 0; i < L; i++) expect(Math.abs(out[i] - exact[i])).toBeLessThanOrEqual(N * u * mag[i] + 1e-30);
      // Every rank ends with the same bits.
      for (const b of bits) expect(b).toEqual(bits[0]);
      await closeAll(ranks);
    }
  });

  it('bf16 payload bytes are half of fp32', async () => {
    const N = 4;
    open = await localRings(N);
    const L = 10_000;
    const recs = await Promise.all(open.map(() => open[0] && new Uint16Array(L)).map((b, r) => open[r].coll.allReduce(b)));
    for (const rec of recs) expect(rec.sent.payload).toBe((2 * (N - 1) * L * 2) / N);
  });
});
