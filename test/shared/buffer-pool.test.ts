// A link's receive buffers: reused, carved from a WebAssembly memory, and summed into in place with the
// hand-assembled SIMD add, which must agree bit for bit with the plain loop (an fp32 sum rounded once is
// the same whether computed in f32 lanes or in f64 and rounded).
import { describe, expect, it } from 'vitest';
import { decodeBf16, encodeBf16 } from '../../shared/bf16.js';
import { BufferPool } from '../../shared/buffer-pool.js';
import { addLoop, simdMemory } from '../../shared/simd-kernels.js';

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
      for (const n of [0, 1, 3, 4, 5, 15, 16, 17, 20, 28, 47, 16383, 16384, 16385, 16404, 100_003]) {
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

/** Random fp32 bit patterns of every class: normal, subnormal, zero, infinity, NaN, and rounding ties. */
function bitPatterns(n: number, seed: number): Uint32Array {
  const u = new Uint32Array(n);
  let s = seed;
  const special = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffffffff, 0x7f7fffff, 0x00000001, 0x3f808000, 0x3f818000, 0x7f7f8000];
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    u[i] = i % 9 === 0 ? special[(s >>> 8) % special.length] : i % 5 === 0 ? (s & 0xffff0000) | 0x8000 : s;
  }
  return u;
}

describe('SIMD bf16 conversions equal the JavaScript reference bit for bit', () => {
  const lengths = [0, 1, 7, 8, 9, 16383, 16384, 16392, 40_003];
  it('narrow (fp32 -> bf16, round to nearest even), into a pool buffer and into any Uint16Array', () => {
    for (const n of lengths) {
      const pool = new BufferPool(8 << 20);
      const src = f32(pool.take(n * 4));
      new Uint32Array(src.buffer, src.byteOffset, n).set(bitPatterns(n, n + 3));
      const want = new Uint16Array(n);
      encodeBf16(src, want);
      const dstPool = pool.take(n * 2);
      const a = new Uint16Array(dstPool.buffer, dstPool.byteOffset, n);
      pool.narrow(a, src);
      const b = new Uint16Array(n);
      pool.narrow(b, src);
      expect(Array.from(a)).toEqual(Array.from(want));
      expect(Array.from(b)).toEqual(Array.from(want));
    }
  });

  it('widen and add-widened (bf16 -> fp32)', () => {
    for (const n of lengths) {
      const pool = new BufferPool(8 << 20);
      const bits = new Uint16Array(bitPatterns(n, n + 5).map((x) => x >>> 16));
      const srcBytes = pool.take(n * 2);
      const src = new Uint16Array(srcBytes.buffer, srcBytes.byteOffset, n);
      src.set(bits);
      const want = new Float32Array(n);
      decodeBf16(bits, want);
      const dst = f32(pool.take(n * 4));
      pool.widen(dst, src);
      expect(Array.from(new Uint32Array(dst.buffer, dst.byteOffset, n))).toEqual(Array.from(new Uint32Array(want.buffer)));
      // acc += widened, against decode-then-add in JavaScript (finite values only, so NaN payloads don't matter)
      const finite = new Uint16Array(bits.map((b) => ((b & 0x7f80) === 0x7f80 ? b & 0x807f : b)));
      const acc = f32(pool.take(n * 4));
      acc.set(random(n, n + 11));
      const ref = acc.slice();
      const wide = new Float32Array(n);
      decodeBf16(finite, wide);
      addLoop(ref, wide, 0, n);
      pool.addWidenedInto(acc, finite, n);
      expect(same(acc, ref)).toBe(true);
    }
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
