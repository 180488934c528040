// The batched value operations qgZ and qwZ use: on real arrays each is the loop it replaces; on a rank without
// values (a simulated one) each does nothing and never asks for a part.
import { describe, expect, it } from 'vitest';
import { REAL_VALUES, noQuantError } from '../../../shared/training/values.js';
import { NO_VALUES } from '../../../shared/whatif/no-values.js';
import { quantizedElems, type QuantFormat } from '../../../shared/tensor/quantize.js';

const f: QuantFormat = { bits: 4, block: 8 };
/** Whole numbers in -7..7 with a 7 in every block: the scale is 1 and int4 holds them exactly, so sums are exact. */
const exact = (seed: number, n: number) => Float32Array.from({ length: n }, (_, i) => (i % f.block === 0 ? 7 : ((i * 5 + seed * 3) % 15) - 7));

describe('values: the batched forms', () => {
  it('toF32Strided takes parts first, first + stride, ... into consecutive slots', () => {
    const src = Float32Array.from({ length: 12 }, (_, i) => i); // 6 parts of 2
    const dst = REAL_VALUES.toF32Strided(src, 1, 2, 3, new Float32Array(6));
    expect(Array.from(dst)).toEqual([2, 3, 6, 7, 10, 11]);
  });

  it('quantizeEach then dequantizeAddEach: every peer but the empty slot, summed exactly', () => {
    const n = 16;
    const Q = quantizedElems(n, f);
    const parts = [0, 1, 2, 3].map((k) => exact(k, n));
    const out = [0, 1, 2, 3].map((k) => (k === 2 ? null : new Uint16Array(Q)));
    const err = noQuantError();
    REAL_VALUES.quantizeEach(
      4,
      (k) => parts[k],
      (k) => out[k],
      f,
      err,
    );
    expect(err.maxErr).toBe(0);
    const acc = new Float32Array(n);
    REAL_VALUES.dequantizeAddEach(4, (k) => out[k], f, new Float32Array(n), acc);
    const want = Float32Array.from({ length: n }, (_, i) => parts[0][i] + parts[1][i] + parts[3][i]);
    expect(Array.from(acc)).toEqual(Array.from(want));
  });

  it('dequantizeEach: each part back into its own slot', () => {
    const n = 16;
    const Q = quantizedElems(n, f);
    const q = new Uint16Array(3 * Q);
    for (let r = 0; r < 3; r++)
      REAL_VALUES.quantizeEach(
        1,
        () => exact(r, n),
        () => q.subarray(r * Q, (r + 1) * Q),
        f,
        noQuantError(),
      );
    const out = new Float32Array(3 * n);
    REAL_VALUES.dequantizeEach(q, f, out, 3);
    for (let r = 0; r < 3; r++) expect(Array.from(out.subarray(r * n, (r + 1) * n))).toEqual(Array.from(exact(r, n)));
  });

  it('without values nothing is looked at: no part or slot is asked for, dst comes back as it was', () => {
    const dst = new Float32Array(4);
    expect(NO_VALUES.toF32Strided(new Float32Array(8), 0, 2, 2, dst)).toBe(dst);
    const asked = (what: string) => () => {
      throw new Error(`asked for a ${what}`);
    };
    NO_VALUES.quantizeEach(128, asked('part'), asked('slot'), f, noQuantError());
    NO_VALUES.dequantizeAddEach(128, asked('slot'), f, new Float32Array(4), new Float32Array(4));
  });
});
