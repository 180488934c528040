// GELU on the SIMD kernels against the JavaScript reference of ops.ts (itself checked against PyTorch through
// the MLP and GPT vectors): fp32 arithmetic against double precision, so equal to a few ulps; the remainder
// that is not a multiple of four, and arrays outside the arena, take the reference itself.
import { describe, expect, it } from 'vitest';
import { KernelArena } from '../../../shared/tensor/kernel-arena.js';
import { arenaGelu, arenaGeluBackward } from '../../../shared/training/activations.js';
import { gelu, geluBackward } from '../../../shared/training/ops.js';
import { Rng } from '../../../shared/training/rng.js';
import { seeded } from '../../helpers/seed.js';

const { seed } = seeded();

describe(`GELU on the SIMD kernels (seed ${seed})`, () => {
  for (const n of [4096, 4099])
    it(`matches ops.ts's GELU and its backward, ${n} elements`, () => {
      const rng = new Rng(seed + n);
      const arena = new KernelArena({ blas: null });
      arena.layout({ x: n, y: n, g: n });
      const x = arena.f32('x', n);
      for (let i = 0; i < n; i++) x[i] = 4 * rng.normal();
      x.set([0, 1e-4, -1e-4, 1e-3, -1e-3, 5e-3, 30, -30, 9, -9], 0); // zero, the Φ = act/x switch, both tails
      const y = arena.f32('y', n);
      arenaGelu(arena, x, y);
      const ref = new Float32Array(n);
      gelu(x, ref);
      for (let i = 0; i < n; i++) expect(Math.abs(y[i] - ref[i]), `gelu(${x[i]})`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(ref[i])));
      const g = arena.f32('g', n);
      const gRef = new Float32Array(n);
      for (let i = 0; i < n; i++) g[i] = gRef[i] = rng.normal();
      arenaGeluBackward(arena, x, y, g);
      geluBackward(x, ref, gRef);
      for (let i = 0; i < n; i++) expect(Math.abs(g[i] - gRef[i]), `gelu'(${x[i]})`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(gRef[i])));
    });
});
