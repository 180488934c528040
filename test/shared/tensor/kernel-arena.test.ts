// The compute kernels (tensor/wasm/matmul.wat) against the plain JavaScript products of training/ops.ts,
// on awkward shapes (1, 3, 17, 129 rows and columns: none a multiple of the tiles), in every build this
// engine runs.
import { describe, expect, it } from 'vitest';
import { toBf16, fromBf16 } from '../../../shared/tensor/bf16.js';
import { blasMissing, machineBlas } from '../../../shared/tensor/blas.js';
import { KernelArena } from '../../../shared/tensor/kernel-arena.js';
import { flavoursOf } from '../../../shared/tensor/wasm/load.js';
import { linearBackward, linearForward } from '../../../shared/training/ops.js';
import { compiled } from '../../helpers/cli.js';
import { seeded } from '../../helpers/seed.js';

const random = seeded();
const SIZES = [1, 3, 17, 129];
const values = (n: number) => Float32Array.from({ length: n }, () => random.int(2001) / 1000 - 1);

/** |a - b| within a few fp32 roundings of a sum of `terms` products of magnitude <= 1. */
function expectClose(actual: Float32Array, expected: Float32Array, terms: number): void {
  expect(actual.length).toBe(expected.length);
  const tol = 4 * terms * 2 ** -23;
  for (let i = 0; i < expected.length; i++) if (!(Math.abs(actual[i] - expected[i]) <= tol)) expect(actual[i], `element ${i}`).toBeCloseTo(expected[i], 6);
}

/** Each array into the arena region of its name. */
function loadAll(arena: KernelArena, regions: Record<string, Float32Array>): void {
  for (const [name, v] of Object.entries(regions)) arena.load(name, v);
}

describe.each(flavoursOf('matmul'))(`compute kernels, %s build (seed ${random.seed})`, (flavour) => {
  const arena = new KernelArena({ flavour });

  it('is the build asked for', () => expect(arena.flavour).toBe(flavour));

  it.each(SIZES.flatMap((M) => SIZES.flatMap((K) => SIZES.map((N) => [M, K, N]))))(
    'M=%i K=%i N=%i: Y = X·Wᵀ + b, dX = dY·W, dW = dYᵀ·X, db = Σ dY',
    (M, K, N) => {
      const [x, w, b, dy] = [values(M * K), values(N * K), values(N), values(M * N)];
      arena.layout({ x: x.length, w: w.length, b: b.length, y: M * N, dy: dy.length, dx: M * K, dw: N * K, db: N });
      arena.load('x', x);
      arena.load('w', w);
      arena.load('b', b);
      arena.load('dy', dy);
      const k = arena.k;
      k.linear_forward(arena.at('x'), arena.at('w'), arena.at('b'), arena.at('y'), M, K, N);
      const y = new Float32Array(M * N);
      linearForward(x, w, b, M, K, N, y);
      expectClose(arena.f32('y', M * N), y, K + 1);
      const [dx, dw, db] = [new Float32Array(M * K), new Float32Array(N * K), new Float32Array(N)];
      linearBackward(x, w, dy, M, K, N, dw, db, dx);
      k.matmul_nn(arena.at('dy'), arena.at('w'), arena.at('dx'), M, K, N);
      expectClose(arena.f32('dx', M * K), dx, N);
      k.matmul_tn(arena.at('dy'), arena.at('x'), arena.at('dw'), N, K, M);
      expectClose(arena.f32('dw', N * K), dw, M);
      k.colsum(arena.at('dy'), arena.at('db'), M, N);
      expectClose(arena.f32('db', N), db, M);
    },
  );

  it.each([1, 7, 8, 9, 129])('%i bf16 values widen to exactly their fp32 values', (n) => {
    const bits = Uint16Array.from(values(n), (v) => toBf16(v));
    arena.layout({ p: n });
    arena.load('p', bits);
    expect(Array.from(arena.f32('p', n))).toEqual(Array.from(bits, fromBf16));
  });
});

describe('compute kernels shared out over threads', () => {
  it.each([2, 3])('%i threads give bit for bit what one thread gives, on shapes large and small', async (threads) => {
    const one = new KernelArena({ blas: null });
    const many = new KernelArena({ threads, threadScript: compiled('shared/tensor/kernel-thread.ts'), blas: null });
    await many.par!.ready();
    try {
      for (const [M, K, N] of [
        [64, 129, 96],
        [17, 33, 7],
        [3, 5, 2],
      ]) {
        const [x, w, b, dy] = [values(M * K), values(N * K), values(N), values(M * N)];
        const outputs: Float32Array[][] = [];
        for (const arena of [one, many]) {
          arena.layout({ x: x.length, w: w.length, b: b.length, y: M * N, dy: dy.length, dx: M * K, dw: N * K });
          loadAll(arena, { x, w, b, dy });
          arena.linearForward(arena.at('x'), arena.at('w'), arena.at('b'), arena.at('y'), M, K, N);
          arena.matmulNN(arena.at('dy'), arena.at('w'), arena.at('dx'), M, K, N);
          arena.matmulTN(arena.at('dy'), arena.at('x'), arena.at('dw'), N, K, M);
          outputs.push(['y', 'dx', 'dw'].map((r) => arena.f32(r).slice()));
        }
        for (let i = 0; i < 3; i++) expect(Array.from(outputs[1][i]), `${M}x${K}x${N} output ${i}`).toEqual(Array.from(outputs[0][i]));
      }
    } finally {
      await many.par!.close();
    }
  });
});

const blas = machineBlas();
if (!blas) console.warn(`BLAS backend not tested: ${blasMissing()}`);

// Under CI a missing BLAS is a failure, except in the project that turns it off on purpose (vitest.config.ts).
describe.skipIf(!blas && (!process.env.CI || process.env.ZEROWIRE_BLAS === 'off'))(`products through the machine's BLAS (${blas?.name ?? 'missing'})`, () => {
  it('is there (CI installs OpenBLAS)', () => expect(blas, blasMissing() ?? '').not.toBeNull());

  it.each([
    [64, 129, 96],
    [17, 33, 7],
    [256, 512, 1024],
    [3, 5, 2],
  ])('M=%i K=%i N=%i: Y = X·Wᵀ + b, dX = dY·W, dW = dYᵀ·X as the JavaScript products', (M, K, N) => {
    const arena = new KernelArena({ blas });
    const [x, w, b, dy] = [values(M * K), values(N * K), values(N), values(M * N)];
    arena.layout({ x: x.length, w: w.length, b: b.length, y: M * N, dy: dy.length, dx: M * K, dw: N * K });
    loadAll(arena, { x, w, b, dy });
    arena.linearForward(arena.at('x'), arena.at('w'), arena.at('b'), arena.at('y'), M, K, N);
    arena.matmulNN(arena.at('dy'), arena.at('w'), arena.at('dx'), M, K, N);
    arena.matmulTN(arena.at('dy'), arena.at('x'), arena.at('dw'), N, K, M);
    const y = new Float32Array(M * N);
    linearForward(x, w, b, M, K, N, y);
    const [dx, dw, db] = [new Float32Array(M * K), new Float32Array(N * K), new Float32Array(N)];
    linearBackward(x, w, dy, M, K, N, dw, db, dx);
    expectClose(arena.f32('y', M * N), y, K + 1);
    expectClose(arena.f32('dx', M * K), dx, N);
    expectClose(arena.f32('dw', N * K), dw, M);
  });
});
