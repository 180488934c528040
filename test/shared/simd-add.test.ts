// The hand-assembled WebAssembly adder must validate on our Node and agree bit for bit with the plain loop
// (an fp32 sum rounded once is the same whether computed in f32 lanes or in f64 and rounded).
import { describe, expect, it } from 'vitest';
import { addLoop, SimdAdder } from '../../shared/simd-add.js';

function random(n: number, seed: number): Float32Array {
  const x = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    x[i] = ((s / 2 ** 32 - 0.5) * 2 ** ((s % 40) - 20)) as number;
  }
  return x;
}

describe('SimdAdder', () => {
  it('uses WebAssembly SIMD on this Node', () => {
    expect(new SimdAdder().simd).toBe(true);
  });

  it('equals the plain loop bit for bit, for lengths around the lane and slice sizes', () => {
    const adder = new SimdAdder();
    for (const n of [0, 1, 3, 4, 5, 15, 16, 17, 16383, 16384, 16385, 100_003]) {
      const acc = random(n, n + 1);
      const x = random(n, n + 7);
      const want = acc.slice();
      addLoop(want, x, 0, n);
      adder.addInto(acc, x, n);
      expect(Buffer.from(acc.buffer).equals(Buffer.from(want.buffer))).toBe(true);
    }
  });

  it('adds only the first n elements, also from unaligned views', () => {
    const adder = new SimdAdder();
    const base = new Float32Array(40).fill(1);
    const acc = base.subarray(3, 33);
    const x = new Float32Array(31).fill(2).subarray(1);
    adder.addInto(acc, x, 21);
    expect(Array.from(base.subarray(0, 3))).toEqual([1, 1, 1]);
    expect(Array.from(acc.subarray(0, 21))).toEqual(new Array(21).fill(3));
    expect(Array.from(acc.subarray(21))).toEqual(new Array(9).fill(1));
  });
});
