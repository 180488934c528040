import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeBf16, encodeBf16, fromBf16, toBf16 } from '../../../shared/tensor/bf16.js';
import { BufferPool } from '../../../shared/transport/buffer-pool.js';
import { parseSafetensors } from '../../../shared/io/safetensors.js';

const vectors = parseSafetensors(readFileSync(new URL('../../fixtures/bf16_rne.safetensors', import.meta.url)));

describe('bf16 round-to-nearest-even', () => {
  it('matches torch.Tensor.to(torch.bfloat16) bit for bit on the reference vectors', () => {
    const src = vectors.get('fp32')!.data as Float32Array;
    const want = vectors.get('bf16_bits')!.data as Uint16Array;
    expect(src.length).toBe(1077);
    const got = new Uint16Array(src.length);
    encodeBf16(src, got);
    const mismatches = [];
    for (let i = 0; i < src.length; i++) if (got[i] !== want[i]) mismatches.push({ i, x: src[i], got: got[i], want: want[i] });
    expect(mismatches).toEqual([]);
    for (let i = 0; i < src.length; i += 97) expect(toBf16(src[i])).toBe(want[i]);
  });

  it('the WebAssembly SIMD bf16 add (reduce-scatter of bf16 traffic) rounds like torch, on every vector that is a sum of two bf16', () => {
    // x = a + b exactly, with a = x truncated to bf16 and b = x - a, wherever b is itself a bf16: then the
    // kernel's fp32 sum is x, and its rounding must give torch's bits for x.
    const src = vectors.get('fp32')!.data as Float32Array;
    const want = vectors.get('bf16_bits')!.data as Uint16Array;
    const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
    const a: number[] = [];
    const b: number[] = [];
    const expected: number[] = [];
    for (let i = 0; i < src.length; i++) {
      const hi = bits[i] >>> 16;
      const rest = Math.fround(src[i] - fromBf16(hi));
      if (!Number.isFinite(src[i]) || fromBf16(toBf16(rest)) !== rest || !Object.is(Math.fround(fromBf16(hi) + rest), src[i])) continue;
      a.push(hi);
      b.push(toBf16(rest));
      expected.push(want[i]);
    }
    expect(expected.length).toBeGreaterThan(80); // 87 of the 1077, 34 of which round away from a
    expect(expected.filter((w, i) => w !== a[i]).length).toBeGreaterThan(30);
    const pool = new BufferPool(1 << 20);
    const bytes = pool.take(a.length * 2); // a pool buffer: the kernel runs on it in place
    const acc = new Uint16Array(bytes.buffer, bytes.byteOffset, a.length);
    acc.set(a);
    pool.addBf16Into(acc, Uint16Array.from(b), a.length);
    expect(Array.from(acc)).toEqual(expected);
  });

  it('rounds exact ties to even and keeps NaN a NaN', () => {
    // 1 + 2^-8 lies exactly between bf16 1.0 and 1.0078125: ties go to the even mantissa (1.0).
    expect(fromBf16(toBf16(1 + 2 ** -8))).toBe(1);
    // 1 + 3*2^-8 lies between 1.0078125 (odd) and 1.015625 (even): goes up.
    expect(fromBf16(toBf16(1 + 3 * 2 ** -8))).toBe(1.015625);
    expect(Number.isNaN(fromBf16(toBf16(NaN)))).toBe(true);
    expect(fromBf16(toBf16(-Infinity))).toBe(-Infinity);
  });

  it('decodes exactly', () => {
    const bits = new Uint16Array([0x3f80, 0xc000, 0x0000, 0x8000, 0x7f80]);
    const out = new Float32Array(bits.length);
    decodeBf16(bits, out);
    expect(Array.from(out)).toEqual([1, -2, 0, -0, Infinity]);
  });
});
