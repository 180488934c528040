// Random trials that can be replayed: each file draws from one seeded generator, and shows its seed in the
// name of the suite (so a failure names it). ZEROWIRE_TEST_SEED=N repeats a run exactly.
import { Rng } from '../../shared/training/rng.js';

export interface Seeded {
  seed: number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** An element of `xs`. */
  pick<T>(xs: readonly T[]): T;
}

export function seeded(): Seeded {
  const fixed = process.env.ZEROWIRE_TEST_SEED;
  const seed = fixed !== undefined ? Number(fixed) >>> 0 : Math.floor(Math.random() * 2 ** 32);
  const rng = new Rng(seed);
  const int = (n: number) => Math.floor(rng.uniform() * n);
  return { seed, int, pick: (xs) => xs[int(xs.length)] };
}
