import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeBf16, encodeBf16, fromBf16, toBf16 } from '../../shared/bf16.js';
import { BufferPool } from '../../shared/buffer-pool.js';
import { parseSafetensors } from '../../shared/safetensors.js';

const vectors = parseSafetensors(readFileSync(new URL('../fixtures/bf16_rne.safetensors', import.meta.url)));

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

  it('the WebAssembly SIMD rounding (reduce-scatter of bf16 traffic) matches torch bit for bit too', () => {
    const src = vectors.get('fp32')!.data as Float32Array;
    const want = vectors.get('bf16_bits')!.data as Uint16Array;
    const pool = new BufferPool(1 << 20);
    const bytes = pool.take(src.byteLength); // a pool buffer: the kernel runs on it in place
    const inPool = new Float32Array(bytes.buffer, bytes.byteOffset, src.length);
    inPool.set(src);
    const got = new Uint16Array(src.length);
    pool.narrow(got, inPool);
    expect(Array.from(got)).toEqual(Array.from(want));
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
