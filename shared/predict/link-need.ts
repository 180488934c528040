// "Is my network enough?" on the step predictor (step-prediction.ts): the least link rate between hosts at
// which a scheme's exposed communication is at most a share of its step, the step against the link rate, and
// the rates at which the fastest scheme changes. Everything here asks the predictor at given rates and
// searches; nothing is fitted or assumed about its shape, but that more rate never costs time.
import type { StepPrediction } from './step-prediction.js';

/** Link rates searched, Gbit/s: far below any LAN, far above any NIC. */
const RATE_FLOOR = 0.001;
export const RATE_CEILING = 100_000;
/** The curve's rates (Gbit/s): a table's columns, and the figure's range. */
export const CURVE_RATES = [1, 2, 5, 10, 25, 50, 100, 200, 400];

export type Predict = (gbit: number) => StepPrediction;

export type Need =
  | { gbit: number; step: StepPrediction } // the least rate, and the step there
  | { neverShare: number }; // not even at RATE_CEILING: the exposed share there

export const exposedShare = (p: StepPrediction) => (p.stepMs > 0 ? p.exposedMs / p.stepMs : 0);

/** `n` rates from `lo` to `hi`, evenly spaced on a log scale. */
export function logRates(lo: number, hi: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => lo * (hi / lo) ** (i / (n - 1)));
}

/** Between rates `lo` (where `holds` is false) and `hi` (where it is true), bisected on a log scale until
 *  they are within a factor `tol`: the least rate found to hold. */
function bisectRate(lo: number, hi: number, tol: number, holds: (gbit: number) => boolean): number {
  while (hi / lo > tol) {
    const mid = Math.sqrt(lo * hi);
    if (holds(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The least rate from which on (every rate above it, on a fine grid) exposed ≤ `share` of the step: found
 *  on a grid from the ceiling down, then by bisection between the last grid rate that holds and the one
 *  below it that does not. */
export function leastRate(predict: Predict, share: number): Need {
  const top = predict(RATE_CEILING);
  if (exposedShare(top) > share) return { neverShare: exposedShare(top) };
  const grid = logRates(RATE_FLOOR, RATE_CEILING, 161); // 20 rates a decade
  let hi = grid.length - 1;
  while (hi > 0 && exposedShare(predict(grid[hi - 1])) <= share) hi--;
  if (hi === 0) return { gbit: RATE_FLOOR, step: predict(RATE_FLOOR) };
  const good = bisectRate(grid[hi - 1], grid[hi], 1 + 1e-6, (r) => exposedShare(predict(r)) <= share);
  return { gbit: good, step: predict(good) };
}

export interface Candidate {
  name: string;
  predict: Predict;
}

/** The fastest of `candidates` at `gbit` (the first on a tie). */
export function fastest(candidates: readonly Candidate[], gbit: number): string {
  let best = candidates[0];
  let bestMs = best.predict(gbit).stepMs;
  for (const c of candidates.slice(1)) {
    const ms = c.predict(gbit).stepMs;
    if (ms < bestMs) [best, bestMs] = [c, ms];
  }
  return best.name;
}

export interface BestChange {
  gbit: number; // from this rate on, `to` is the fastest
  from: string;
  to: string;
}

/** The rates between `lo` and `hi` at which the fastest candidate changes, each to 0.1%. */
export function bestChanges(candidates: readonly Candidate[], lo: number, hi: number): BestChange[] {
  if (!candidates.length) return [];
  const grid = logRates(lo, hi, 241);
  const changes: BestChange[] = [];
  let prev = fastest(candidates, grid[0]);
  for (let i = 1; i < grid.length; i++) {
    const now = fastest(candidates, grid[i]);
    if (now === prev) continue;
    const b = bisectRate(grid[i - 1], grid[i], 1.001, (r) => fastest(candidates, r) !== prev);
    changes.push({ gbit: b, from: prev, to: now });
    prev = now;
  }
  return changes;
}
