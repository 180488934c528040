// How late each host's ranks entered collectives, and whether one host was late enough, often enough and
// alone enough to be named (links.ts puts it in the verdict, after what a slow link into it explains).
// The rule and the runs it was checked on: docs/lan.md, "A late host: the rule".
import type { SchemeSummary } from '../control/messages.js';
import { median } from '../tensor/stats.js';

interface RankHost {
  rank: number;
  host: string;
}

/** Lateness that matters: at least this share of a step, and this many ms. Below it a host is not the step's
 *  cost: beside a CPU burner a healthy host of two was 5.0 ms late in 5 of 7 steps of 34 ms (15%), while hosts
 *  on 0.3 of a core were 24-56% (bench/lateness.ts; docs/lan.md). */
const LATE_SHARE = 0.2;
const LATE_FLOOR_MS = 2;
/** The least counted steps a lateness verdict needs: fewer, and one stall is most of the evidence. */
const LATE_MIN_STEPS = 5;
/** The other hosts' spread: a host is late in a step when later than this quantile of theirs over the run. */
const SPREAD_QUANTILE = 0.9;
/** Attribution, not noise: another host late by more than half as much (and by what matters) is a second
 *  culprit, and one host is not named for both. A slow host's ring neighbour waiting for its data was late by
 *  0.23-0.44 of it in the runs of docs/lan.md, 0.51 in a CI run: a rival whose own compute and event loop ran
 *  as the others' (it only waited) does not stand against a host whose own ran longer by what matters. */
const LATE_DOMINANCE = 2;

export interface HostLateness {
  host: string;
  ms: number; // the median over counted steps of how late it entered the step's collectives, in ms (early: 0)
  lateSteps: number; // counted steps in which it was later than the bar
  steps: number; // counted steps judged
  bar: number; // its bar: the larger of what matters and the other hosts' spread (their 90th percentile)
  ownMs: number; // the median over counted steps of how much longer its slowest rank computed than the other hosts' median rank
  stallMs: number; // ... and how much longer its most held-up rank's event loop was held up than theirs (0: not measured)
  /** Its compute or its event loop ran longer than the others' by what matters and by more than the other hosts'
   *  own figures reach in a healthy step (their 90th percentile): a host short of CPU, not one that waited. */
  own: boolean;
  /** Every counted step had every rank's event-loop figure (a rank of this version): `own` can be relied on. */
  measured: boolean;
}

/** The q-quantile of xs (nearest rank); 0 for none. */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : 0;
}

/** One counted step: each collective's entry per rank, each rank's host and clock allowance. */
interface Step {
  entries: number[][]; // [collective][rank]
  host: string[];
  allowance: number[]; // what rank r's entry may be off by, its clock's and the worst clock's uncertainty
  compute: number[]; // [rank] its units' compute spans summed (ms): the work no link can slow
  stall: number[]; // [rank] the longest its event loop was held up (ms), NaN where not measured
}

/** How late `h` made step `s`: one figure of time. In each collective, its latest rank's entry after the
 *  median entry of the ranks on the hosts `ref` (with two hosts, the other host's own), less what two ranks'
 *  clocks could disagree by; the step's figure is what that lag newly rose by, collective after collective:
 *  a host short of CPU is late again after each collective that realigned everyone (each a wait of its own,
 *  so each counts), where one stall that shifts every later entry counts once, at its length (a plain sum
 *  counted it again in each collective after it). Signed where it never rose (its first collective's lag,
 *  negative if early), so that the spread is the whole of the jitter, not its late half. */
function lag(s: Step, h: string, ref: ReadonlySet<string>): number {
  let [total, before, first] = [0, 0, Number.NaN];
  for (const entries of s.entries) {
    const m = median(entries.filter((_, r) => ref.has(s.host[r])));
    const now = Math.max(...entries.map((e, r) => (s.host[r] === h ? e - m - s.allowance[r] : -Infinity)));
    if (Number.isNaN(first)) first = now;
    total += Math.max(0, now - Math.max(0, before));
    before = now;
  }
  return total > 0 ? total : first;
}

function countedSteps(
  ranks: RankHost[],
  summaries: ReadonlyMap<string, readonly Omit<SchemeSummary, 'master'>[]>,
): { steps: Step[]; stepMs: number; clockMs: number } {
  const steps: Step[] = [];
  const stepMs: number[] = [];
  let clockMs = 0;
  for (const sums of summaries.values()) {
    if (sums.length !== ranks.length) continue;
    const u = sums.map((s) => (Number.isFinite(s.clock?.uncertaintyMs) ? s.clock.uncertaintyMs : 0));
    const worst = Math.max(...u);
    clockMs = Math.max(clockMs, 2 * worst);
    const host = sums.map((s) => ranks.find((r) => r.rank === s.rank)?.host ?? String(s.rank));
    const n = sums[0].steps.length;
    for (let t = n > 1 ? 1 : 0; t < n; t++) {
      if (sums.some((s) => !s.steps[t])) continue;
      stepMs.push(...sums.map((s) => s.steps[t].stepMs));
      const entries = sums[0].steps[t].collectives
        .map((_, i) => sums.map((s) => s.steps[t].collectives[i]?.entry ?? Number.NaN))
        .filter((es) => !es.some(Number.isNaN));
      const compute = sums.map((s) => s.steps[t].units.reduce((ms, u) => ms + (u.end - u.start), 0));
      const stall = sums.map((s) => s.steps[t].loopLagMs ?? Number.NaN);
      if (entries.length) steps.push({ entries, host, allowance: u.map((x) => x + worst), compute, stall });
    }
  }
  return { steps, stepMs: stepMs.length ? stepMs.reduce((a, b) => a + b, 0) / stepMs.length : 0, clockMs };
}

/** How much longer `h`'s slowest rank computed in step `s` than the median rank of the other hosts: a host
 *  short of CPU computes longer, where a host behind a slow link computes as fast and only waits longer. */
function ownCompute(s: Step, h: string): number {
  return excess(s.compute, s.host, h);
}

/** How much longer `h`'s most held-up rank's event loop was held up in step `s` than the other hosts' median
 *  rank's: a host short of CPU stalls whatever it is doing (reading its links too, which then look slow),
 *  where a host waiting on a slow link has its loop free. */
function ownStall(s: Step, h: string): number {
  return s.stall.some(Number.isNaN) ? 0 : excess(s.stall, s.host, h);
}

function excess(xs: number[], host: string[], h: string): number {
  const mine = xs.filter((_, r) => host[r] === h);
  const theirs = xs.filter((_, r) => host[r] !== h);
  return mine.length && theirs.length ? Math.max(...mine) - median(theirs) : 0;
}

/** Each host's lateness; the one host to name, if any; why none was judged, if so. */
export function judgeLateness(
  ranks: RankHost[],
  summaries: ReadonlyMap<string, readonly Omit<SchemeSummary, 'master'>[]>,
): { lateness: HostLateness[]; latest: HostLateness | null; matters: number; stepMs: number; clockMs: number; tooFew: string | null } {
  const { steps, stepMs, clockMs } = countedSteps(ranks, summaries);
  const hosts = steps.length ? [...new Set(ranks.map((r) => r.host))] : []; // nothing trained (zerowire links): none
  const without = (...out: string[]) => new Set(hosts.filter((x) => !out.includes(x)));
  const matters = Math.max(LATE_FLOOR_MS, LATE_SHARE * stepMs);
  // The bar comes from the run itself: the other hosts' spread, each against the hosts other than itself and
  // the one judged (so a late host does not make the others look early; with two hosts, the other against
  // it). On a busy machine every host is late now and then; a host short of CPU is later than the others'
  // spread in most steps, where a healthy one is so in about a tenth of them.
  const lateness: HostLateness[] = hosts.map((h) => {
    const xs = steps.map((s) => lag(s, h, without(h)));
    const spread = hosts.filter((g) => g !== h).flatMap((g) => steps.map((s) => lag(s, g, hosts.length > 2 ? without(g, h) : new Set([h]))));
    const bar = Math.max(matters, quantile(spread, SPREAD_QUANTILE));
    const ownMs = Math.max(0, median(steps.map((s) => ownCompute(s, h))));
    const stallMs = Math.max(0, median(steps.map((s) => ownStall(s, h))));
    // the same figures of the other hosts, step by step: how far they reach without being the culprit
    const others = (f: (s: Step, g: string) => number) =>
      quantile(
        hosts.filter((g) => g !== h).flatMap((g) => steps.map((s) => f(s, g))),
        SPREAD_QUANTILE,
      );
    const own = ownMs > Math.max(matters, others(ownCompute)) || stallMs > Math.max(matters, others(ownStall));
    const measured = steps.every((s) => !s.stall.some(Number.isNaN));
    return { host: h, ms: Math.max(0, median(xs)), lateSteps: xs.filter((x) => x > bar).length, steps: xs.length, bar, ownMs, stallMs, own, measured };
  });
  const counted = Math.min(...lateness.map((h) => h.steps));
  const judgeable = lateness.length > 1 && counted >= LATE_MIN_STEPS;
  // Late beyond the run's own spread in most steps; or, where its own compute or loop stalled beyond the others'
  // (`own`), late by what matters: the spread is then partly its own doing (its ring neighbour waits for it and
  // is late too), and a host on a tenth of a core was over that bar in only 4 of 10 steps in two runs of three.
  const most = lateness.filter((h) => (2 * h.lateSteps > h.steps && h.ms > h.bar) || (h.own && h.ms > matters)).sort((a, b) => b.ms - a.ms);
  // late only waiting for the one that stalled: its own compute and loop within what matters of the others'
  const waited = (h: HostLateness) => most[0].own && Math.max(h.ownMs, h.stallMs) <= matters;
  const alone = most.length > 0 && lateness.every((h) => h === most[0] || h.ms <= matters || LATE_DOMINANCE * h.ms <= most[0].ms || waited(h));
  const latest = judgeable && alone ? most[0] : null;
  const tooFew = lateness.length > 1 && !judgeable ? `too few steps to judge lateness (${counted} counted, ${LATE_MIN_STEPS} needed)` : null;
  return { lateness, latest, matters, stepMs, clockMs, tooFew };
}
