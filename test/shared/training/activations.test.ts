// GELU, LayerNorm and the causal softmax on the SIMD kernels against the JavaScript reference of ops.ts (itself checked against PyTorch through
// the MLP and GPT vectors): fp32 arithmetic against double precision, so equal to a few ulps; the remainder
// that is not a multiple of four, and arrays outside the arena, take the reference itself.
import { describe, expect, it } from 'vitest';
import { KernelArena } from '../../../shared/tensor/kernel-arena.js';
import {
  arenaCausalSoftmax,
  arenaCausalSoftmaxBackward,
  arenaGelu,
  arenaGeluBackward,
  arenaLayerNorm,
  arenaLayerNormBackward,
} from '../../../shared/training/activations.js';
import { causalSoftmax, causalSoftmaxBackward, gelu, geluBackward, layerNorm, layerNormBackward } from '../../../shared/training/ops.js';
import { Rng } from '../../../shared/training/rng.js';
import { seeded } from '../../helpers/seed.js';

const { seed } = seeded();

describe(`the non-product kernels (seed ${seed})`, () => {
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

  it('LayerNorm forward and backward match ops.ts', () => {
    const rng = new Rng(seed + 1);
    const [N, D] = [37, 64];
    const arena = new KernelArena({ blas: null });
    arena.layout({ x: N * D, w: D, b: D, out: N * D, st: 2 * N, dy: N * D, dw: D, db: D, dx: N * D });
    const view = (name: string, n: number, f: () => number) => {
      const v = arena.f32(name, n);
      for (let i = 0; i < n; i++) v[i] = f();
      return v;
    };
    const views = {
      x: view('x', N * D, () => 3 + 2 * rng.normal()),
      w: view('w', D, () => 1 + 0.1 * rng.normal()),
      b: view('b', D, () => 0.1 * rng.normal()),
      dy: view('dy', N * D, () => rng.normal()),
      dw: view('dw', D, () => rng.normal()),
      db: view('db', D, () => rng.normal()),
      dx: view('dx', N * D, () => rng.normal()),
    };
    const copy = (x: Float32Array) => Float32Array.from(x);
    const [out, st] = [arena.f32('out', N * D), arena.f32('st', 2 * N)];
    const [outRef, stRef] = [new Float32Array(N * D), new Float32Array(2 * N)];
    arenaLayerNorm(arena, views.x, views.w, views.b, N, D, out, st);
    layerNorm(views.x, views.w, views.b, N, D, outRef, stRef);
    const close = (a: Float32Array, b: Float32Array, what: string) => {
      for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i]), `${what}[${i}]`).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(b[i])));
    };
    close(out, outRef, 'out');
    close(st, stRef, 'stats');
    const [dw, db, dx] = [copy(views.dw), copy(views.db), copy(views.dx)];
    arenaLayerNormBackward(arena, views.x, views.w, st, views.dy, N, D, views.dw, views.db, views.dx);
    layerNormBackward(views.x, views.w, stRef, views.dy, N, D, dw, db, dx);
    close(views.dw, dw, 'dw');
    close(views.db, db, 'db');
    close(views.dx, dx, 'dx');
  });

  it('the causal softmax and its backward match ops.ts, rows of every length mod 4', () => {
    const rng = new Rng(seed + 2);
    const T = 13;
    const scale = 0.35;
    const arena = new KernelArena({ blas: null });
    arena.layout({ P: T * T, dP: T * T });
    const [P, dP] = [arena.f32('P', T * T), arena.f32('dP', T * T)];
    for (let i = 0; i < T * T; i++) [P[i], dP[i]] = [5 * rng.normal(), rng.normal()];
    const [Pref, dPref] = [Float32Array.from(P), Float32Array.from(dP)];
    arenaCausalSoftmax(arena, P, T, scale);
    causalSoftmax(Pref, T, scale);
    arenaCausalSoftmaxBackward(arena, P, dP, T, scale);
    causalSoftmaxBackward(Pref, dPref, T, scale);
    for (let i = 0; i < T * T; i++) {
      expect(Math.abs(P[i] - Pref[i]), `P[${i}]`).toBeLessThanOrEqual(1e-6);
      expect(Math.abs(dP[i] - dPref[i]), `dS[${i}]`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(dPref[i])));
    }
    expect(P[1]).toBe(0); // row 0 attends to position 0 alone
  });
});
