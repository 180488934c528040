// A link's receive buffers: reused, carved from a WebAssembly memory, and summed into in place with the
// hand-assembled SIMD kernels, which must agree bit for bit with the JavaScript reference (an fp32 sum rounded
// once is the same whether computed in f32 lanes or in f64 and rounded).
import { describe, expect, it } from 'vitest';
import { fromBf16, toBf16 } from '../../../shared/tensor/bf16.js';
import { BufferPool } from '../../../shared/transport/buffer-pool.js';
import { addLoop, simdMemory } from '../../../shared/tensor/simd-kernels.js';

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

/** Random bf16 bit patterns of every class: normal, subnormal, zero, infinity, NaN (quiet and signalling),
 *  and pairs whose fp32 sum lands exactly halfway between two bf16 (the rounding ties). */
function bf16Patterns(n: number, seed: number): Uint16Array {
  const u = new Uint16Array(n);
  let s = seed;
  const special = [0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffff, 0x7f81, 0x7f7f, 0x0001, 0x8001, 0x3f80, 0x3b80];
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    u[i] = i % 7 === 0 ? special[(s >>> 8) % special.length] : s >>> 16;
  }
  return u;
}

describe('SIMD bf16 add equals the JavaScript reference bit for bit', () => {
  // The reference: widen both, add in fp32, round once to nearest even (bf16.ts, itself checked against torch)
  const reference = (a: Uint16Array, b: Uint16Array) => a.map((x, i) => toBf16(fromBf16(x) + fromBf16(b[i])));
  const isNaN = (bits: number) => (bits & 0x7fff) > 0x7f80;
  for (const where of ['in place (a pool buffer)', 'staged (any Uint16Array)']) {
    it(`${where}: every class of bit pattern, lengths around the lane, unroll and slice sizes`, () => {
      const pool = new BufferPool(8 << 20);
      for (const n of [0, 1, 7, 8, 9, 31, 32, 33, 40, 32767, 32768, 32777, 100_003]) {
        const bytes = pool.take(n * 2);
        const acc = where.startsWith('in place') ? new Uint16Array(bytes.buffer, bytes.byteOffset, n) : new Uint16Array(n);
        acc.set(bf16Patterns(n, n + 1));
        const x = bf16Patterns(n, n + 7);
        const want = reference(acc, x);
        pool.addBf16Into(acc, x, n);
        // Bit for bit, except that a NaN need only be a NaN: which NaN an add returns is left open by IEEE 754
        // (and by WebAssembly), and no consumer looks at a NaN's payload.
        const bad = Array.from(acc).findIndex((v, i) => (isNaN(want[i]) ? !isNaN(v) : v !== want[i]));
        expect(bad < 0 ? 'all equal' : `element ${bad} of ${n}: ${acc[bad].toString(16)} + ... != ${want[bad].toString(16)}`).toBe('all equal');
        pool.give(bytes);
      }
    });
  }

  it('rounds the ties to even: 1 + 2^-8 -> 1, 1.0078125 + 2^-8 -> 1.015625', () => {
    const pool = new BufferPool(1 << 20);
    const bytes = pool.take(16);
    const acc = new Uint16Array(bytes.buffer, bytes.byteOffset, 8).fill(toBf16(1));
    acc[1] = toBf16(1.0078125);
    pool.addBf16Into(acc, new Uint16Array(8).fill(toBf16(2 ** -8)), 8);
    expect(fromBf16(acc[0])).toBe(1);
    expect(fromBf16(acc[1])).toBe(1.015625);
  });

  it('touches only the first n elements', () => {
    const pool = new BufferPool(1 << 20);
    const bytes = pool.take(80);
    const acc = new Uint16Array(bytes.buffer, bytes.byteOffset, 40).fill(toBf16(1));
    pool.addBf16Into(acc, new Uint16Array(40).fill(toBf16(1)), 21);
    expect(Array.from(acc.subarray(0, 21)).every((v) => v === toBf16(2))).toBe(true);
    expect(Array.from(acc.subarray(21)).every((v) => v === toBf16(1))).toBe(true);
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
