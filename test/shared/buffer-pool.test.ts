// A link's receive buffers: reused, carved from a WebAssembly memory, and summed into in place with the
// hand-assembled SIMD add, which must agree bit for bit with the plain loop (an fp32 sum rounded once is
// the same whether computed in f32 lanes or in f64 and rounded).
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../shared/buffer-pool.js';
import { addLoop, simdMemory } from '../../shared/simd-add.js';

function random(n: number, seed: number): Float32Array {
  const x = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    x[i] = (s / 2 ** 32 - 0.5) * 2 ** ((s % 40) - 20);
  }
  return x;
}

const f32 = (b: Uint8Array) => new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
const same = (a: Float32Array, b: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('SIMD add', () => {
  it('the module validates and runs on this Node', () => {
    expect(simdMemory(65536)).not.toBeNull();
  });

  for (const where of ['in place (a pool buffer)', 'staged (any Float32Array)']) {
    it(`${where}: equals the plain loop bit for bit, for lengths around the lane and slice sizes`, () => {
      const pool = new BufferPool(8 << 20);
      for (const n of [0, 1, 3, 4, 5, 15, 16, 17, 16383, 16384, 16385, 100_003]) {
        const acc = where.startsWith('in place') ? f32(pool.take(n * 4)) : new Float32Array(n);
        acc.set(random(n, n + 1));
        const x = random(n, n + 7);
        const want = acc.slice();
        addLoop(want, x, 0, n);
        pool.addInto(acc, x, n);
        expect(same(acc, want)).toBe(true);
      }
    });
  }

  it('touches only the first n elements, also of unaligned views', () => {
    const pool = new BufferPool(1 << 20);
    const base = new Float32Array(40).fill(1);
    const acc = base.subarray(3, 33);
    const x = new Float32Array(31).fill(2).subarray(1);
    pool.addInto(acc, x, 21);
    expect(Array.from(base.subarray(0, 3))).toEqual([1, 1, 1]);
    expect(Array.from(acc.subarray(0, 21))).toEqual(new Array(21).fill(3));
    expect(Array.from(acc.subarray(21))).toEqual(new Array(9).fill(1));
  });
});

describe('BufferPool', () => {
  it('gives back the same buffers, ignores strangers and double returns, and falls back when the arena is full', () => {
    const pool = new BufferPool(1 << 20);
    const a = pool.take(4096);
    pool.give(a);
    pool.give(a); // twice: must not be handed out twice
    pool.give(new Uint8Array(4096)); // not ours
    const b = pool.take(4096);
    const c = pool.take(4096);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    // Buffers never overlap, and past the arena's capacity they are ordinary memory.
    b.fill(1);
    c.fill(2);
    expect(b.every((v) => v === 1)).toBe(true);
    const big = Array.from({ length: 300 }, () => pool.take(4096));
    expect(big.some((x) => x.buffer.byteLength === 4096)).toBe(true);
    expect(big.every((x) => x.byteLength === 4096)).toBe(true);
  });
});
