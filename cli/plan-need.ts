// `zerowire plan --need PCT --compute model:PRESET --model M --world N --hosts H`: for each scheme, the least
// link rate between hosts at which its exposed communication is at most PCT% of the step (the predictor of
// `plan --compute`, searched: shared/accounting/link-need.ts), the step and tokens/s there, or why never; the
// step against the link rate from 1 to 400 Gbit/s; and where the fastest scheme that fits changes.
import { writeFileSync } from 'node:fs';
import { bestChanges, CURVE_RATES, exposedShare, fastest, leastRate, RATE_CEILING, type Candidate, type Need } from '../shared/predict/link-need.js';
import { PAGE_COLUMNS, renderNeedPage, type NeedCurve } from '../shared/predict/need-figure.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { predictStep, type Link, type StepPrediction } from '../shared/predict/step-prediction.js';
import { textTable } from '../shared/accounting/table.js';
import type { SchemeName } from '../shared/control/run-config.js';
import { schemeTitle } from '../shared/training/schemes/table.js';
import { activationBytes, tokensOf } from '../shared/whatif/model-passes.js';
import { runDevice } from '../shared/whatif/preset.js';
import { cardMemory, whatIfConfig, type WhatIfPlanArgs } from './plan-whatif.js';

export interface NeedArgs extends WhatIfPlanArgs {
  need: number; // percent of the step
  latencyUs: number;
  intra: Link;
  html?: string;
}

export interface SchemeNeed {
  scheme: SchemeName;
  title: string;
  fitsBytes: { need: number; card: number } | null; // null: it fits
  need: Need | null; // null: it does not fit
  predict: (gbit: number) => StepPrediction;
  never?: string; // why no rate is enough
}

/** Why no link rate between hosts is enough: the links inside a host (the hybrid's rings), or latency. */
function whyNever(share: number, everyLinkFast: StepPrediction, a: NeedArgs): string {
  const at = `even at ${RATE_CEILING / 1000} Tbit/s between hosts ${(100 * share).toFixed(1)}% of the step is exposed`;
  if (exposedShare(everyLinkFast) > a.need / 100) return `latency-bound: ${at} (${a.latencyUs} µs per ring step)`;
  return `bound by the links inside a host: ${at}, on their ${a.intra.gbit} Gbit/s (--intra-gbit${a.intra.gbit === DEFAULT_INTRA_GBIT ? `, its default: give your hosts' NVLink or PCIe rate` : ''})`;
}

/** Each scheme's answer, with its predictor (memoized: the search asks the same rates again). */
export function schemeNeeds(a: NeedArgs): { needs: SchemeNeed[]; plan: RunPlan; describe: string } {
  const config = whatIfConfig(a);
  const { device, cost } = runDevice(config);
  const plan = new RunPlan(config, a.world);
  const activations = activationBytes(plan.gpu, config.batch / (a.world * config.accumulate), config.recompute);
  const card = cardMemory(a, device).bytes;
  const needs = config.schemes.map((scheme) => {
    const memo = new Map<number, StepPrediction>();
    const predict = (gbit: number) => {
      let p = memo.get(gbit);
      if (!p) memo.set(gbit, (p = predictStep(plan, scheme, cost, { gbit, latencyUs: a.latencyUs }, a.intra)));
      return p;
    };
    const bytes = plan.memory(scheme).peak + activations;
    const fits = bytes <= card;
    const need = fits ? leastRate(predict, a.need / 100) : null;
    const ceiling = { gbit: RATE_CEILING, latencyUs: a.latencyUs };
    const never = need && 'neverShare' in need ? whyNever(need.neverShare, predictStep(plan, scheme, cost, ceiling, ceiling), a) : undefined;
    return { scheme, title: schemeTitle(scheme), fitsBytes: fits ? null : { need: bytes, card }, need, predict, never };
  });
  const hosts = a.shardGroup ? a.world / a.shardGroup : a.world;
  const describe = `${plan.spec.describe()} (${plan.spec.params.toExponential(3)} parameters) on ${a.world} ${device.title} (modeled), ${hosts} hosts of ${a.world / hosts}, global batch ${config.batch}${config.accumulate > 1 ? ` in ${config.accumulate} micro-batches` : ''}, ${a.latencyUs} µs per ring step, links inside a host ${a.intra.gbit} Gbit/s${a.intra.gbit === DEFAULT_INTRA_GBIT ? ' (--intra-gbit default; HSDP and ZeRO++ depend on it)' : ''}`;
  return { needs, plan, describe };
}

/** --intra-gbit's default: an answer that rests on it says so. */
export const DEFAULT_INTRA_GBIT = 100;

const gbit = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toPrecision(2));
const gb = (b: number) => (b / 1e9).toFixed(1);

function answerRow(n: SchemeNeed, tokens: number): string[] {
  if (n.fitsBytes) return [n.title, `never: does not fit (${gb(n.fitsBytes.need)} GB per GPU > ${gb(n.fitsBytes.card)} GB)`, '', '', ''];
  const need = n.need!;
  if ('neverShare' in need) return [n.title, `never: ${n.never}`, '', '', ''];
  const s = need.step;
  return [n.title, gbit(need.gbit), s.stepMs.toFixed(1), s.exposedMs.toFixed(1), ((tokens * 1000) / s.stepMs).toFixed(0)];
}

/** The text `plan --need` prints (and, with --html, the page it writes). */
export async function needPlan(a: NeedArgs, { needs, plan, describe }: ReturnType<typeof schemeNeeds> = schemeNeeds(a), width = Infinity): Promise<string> {
  const tokens = tokensOf(plan.gpu, plan.config.batch);
  // on a narrow screen (or the page), why a scheme never gets there goes under the table
  const answersAt = (w: number) =>
    textTable(
      [['scheme', `least Gbit/s between hosts (exposed ≤ ${a.need}% of the step)`, 'step ms there', 'exposed ms', 'tokens/s']],
      needs.map((n) => answerRow(n, tokens)),
      { width: w, noteColumns: [1] },
    );
  const answers = answersAt(width);
  const curveHead = [['scheme', ...CURVE_RATES.map((r) => `${r} Gbit/s`)]];
  const curve = textTable(
    curveHead,
    needs.map((n) => [n.title + (n.fitsBytes ? ' (does not fit)' : ''), ...CURVE_RATES.map((r) => n.predict(r).stepMs.toFixed(0))]),
  );
  const fitting: Candidate[] = needs.filter((n) => !n.fitsBytes).map((n) => ({ name: n.title, predict: n.predict }));
  const lo = CURVE_RATES[0];
  const hi = CURVE_RATES[CURVE_RATES.length - 1];
  const changes = bestChanges(fitting, lo, hi);
  const first = fitting.length ? fastest(fitting, lo) : null;
  const best = first
    ? `fastest scheme that fits, ${lo} to ${hi} Gbit/s: ${[first, ...changes.map((c) => `from ${gbit(c.gbit)} Gbit/s ${c.to}`)].join(', ')}`
    : 'no scheme fits this device';
  if (a.html) {
    const curves: NeedCurve[] = needs.map((n) => ({
      scheme: n.title,
      fits: !n.fitsBytes,
      predict: (r) => n.predict(r).stepMs,
      need: n.need && 'gbit' in n.need ? n.need.gbit : null,
    }));
    writeFileSync(
      a.html,
      await renderNeedPage({ title: `Link rate each scheme needs: ${describe}`, curves, changes, lo, hi, tables: [answersAt(PAGE_COLUMNS), curve, best] }),
    );
  }
  return [
    describe,
    answers,
    '',
    `step ms against the link rate between hosts (Gbit/s each way):`,
    curve,
    best,
    `exposed: the step minus the modeled compute (plan --compute's predictor: each collective at its steps x latency + bytes at the link rate, overlapped as each scheme overlaps); a scheme that does not fit the card's memory needs no rate.`,
  ].join('\n');
}
