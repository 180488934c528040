// How late each host's ranks entered collectives, and whether one host was late enough, often enough and
// alone enough to be named (links.ts puts it in the verdict, after what a slow link into it explains).
// The rule and the runs it was checked on: docs/lan.md, "A late host: the rule".
import type { SchemeSummary } from '../control/messages.js';
import { median } from '../tensor/stats.js';

interface RankHost {
  rank: number;
  host: string;
}

/** A host is late by more than this share of a step, and at least this many ms. */
const LATE_SHARE = 0.1;
const LATE_FLOOR_MS = 2;
/** The least counted steps a lateness verdict needs: fewer, and one stall is most of the evidence. */
const LATE_MIN_STEPS = 5;
/** The named host's median is at least this many times any other late host's: a ring neighbour waiting for
 *  a slow host's data was late by 0.23-0.44 of it in the runs that saw one late in most steps (docs/lan.md). */
const LATE_DOMINANCE = 2;

export interface HostLateness {
  host: string;
  ms: number; // the median over counted steps of the ms per step its ranks entered collectives late
  lateSteps: number; // counted steps in which it was later than the other hosts' median by more than the bar
  steps: number; // counted steps judged
}

/** How late each host's ranks were, step by step: in each step the sum over its collectives of how long after
 *  the median rank each entered, less what the two ranks' clocks could disagree by (each rank's offset is
 *  known within ± its uncertainty, so an entry that late may be the clocks, not the rank); early counts
 *  nothing. A host's figure per step is the mean over its ranks; its statistic is the median over steps,
 *  with the count of steps beyond the bar: a CPU quota keeps a host late in most steps, where a busy
 *  machine's stall makes one host very late in one step and none in the rest. Also the mean step. */
function latenessByHost(
  ranks: RankHost[],
  summaries: ReadonlyMap<string, readonly Omit<SchemeSummary, 'master'>[]>,
): { perStep: Map<string, number[]>; stepMs: number; clockMs: number } {
  const late = new Map<number, number[]>(); // per rank, per counted step
  const stepMs: number[] = [];
  let clockMs = 0;
  for (const sums of summaries.values()) {
    if (sums.length !== ranks.length) continue;
    const u = sums.map((s) => (Number.isFinite(s.clock?.uncertaintyMs) ? s.clock.uncertaintyMs : 0));
    const worst = Math.max(...u);
    clockMs = Math.max(clockMs, 2 * worst);
    const steps = sums[0].steps.length;
    for (let t = steps > 1 ? 1 : 0; t < steps; t++) {
      if (sums.some((s) => !s.steps[t])) continue;
      stepMs.push(...sums.map((s) => s.steps[t].stepMs));
      const perRank = sums.map(() => 0);
      for (let i = 0; i < sums[0].steps[t].collectives.length; i++) {
        const entries = sums.map((s) => s.steps[t].collectives[i]?.entry ?? Number.NaN);
        if (entries.some(Number.isNaN)) continue;
        const m = median(entries);
        entries.forEach((e, r) => (perRank[r] += Math.max(0, e - m - u[r] - worst)));
      }
      perRank.forEach((ms, r) => (late.get(r) ?? late.set(r, []).get(r)!).push(ms));
    }
  }
  const perStep = new Map<string, number[]>();
  if (!stepMs.length) return { perStep, stepMs: 0, clockMs }; // nothing trained (zerowire links): no lateness to speak of
  for (const host of new Set(ranks.map((r) => r.host))) {
    const mine = ranks.filter((r) => r.host === host).map((r) => late.get(r.rank) ?? []);
    const n = Math.min(...mine.map((xs) => xs.length));
    perStep.set(
      host,
      Array.from({ length: n }, (_, t) => mine.reduce((a, xs) => a + xs[t], 0) / mine.length),
    );
  }
  return { perStep, stepMs: stepMs.reduce((a, b) => a + b, 0) / stepMs.length, clockMs };
}

/** Each host's lateness; the one host to name, if any, with the bar it cleared; why none was judged, if so. */
export function judgeLateness(
  ranks: RankHost[],
  summaries: ReadonlyMap<string, readonly Omit<SchemeSummary, 'master'>[]>,
): { lateness: HostLateness[]; latest: (HostLateness & { bar: number }) | null; stepMs: number; clockMs: number; tooFew: string | null } {
  const { perStep, stepMs, clockMs } = latenessByHost(ranks, summaries);
  const bar = Math.max(LATE_FLOOR_MS, LATE_SHARE * stepMs);
  const others = (host: string, t: number) => median([...perStep].filter(([h]) => h !== host).map(([, ys]) => ys[t] ?? 0));
  const lateness: HostLateness[] = [...perStep].map(([host, xs]) => ({
    host,
    ms: median(xs),
    lateSteps: xs.filter((x, t) => x - others(host, t) > bar).length,
    steps: xs.length,
  }));
  const counted = Math.min(...lateness.map((h) => h.steps));
  const judgeable = lateness.length > 1 && counted >= LATE_MIN_STEPS;
  // Later than the other hosts by the bar in most steps, and far later than any other such host: on a busy
  // machine every host is late now and then (a healthy one in at most 4 of 10 steps here, beside a CPU burner
  // on every core), and one stall is no verdict. Its neighbour in the ring, waiting for its data, is late too,
  // on a loaded machine in most steps, but by a part of its lateness; two hosts about as late are not one culprit.
  const most = lateness.filter((h) => 2 * h.lateSteps > h.steps && h.ms > bar).sort((a, b) => b.ms - a.ms);
  const alone = most.length > 0 && most.slice(1).every((h) => LATE_DOMINANCE * h.ms <= most[0].ms);
  const latest = judgeable && alone ? { ...most[0], bar } : null;
  const tooFew = lateness.length > 1 && !judgeable ? `too few steps to judge lateness (${counted} counted, ${LATE_MIN_STEPS} needed)` : null;
  return { lateness, latest, stepMs, clockMs, tooFew };
}
