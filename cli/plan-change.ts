// `plan --deepspeed FILE --compute model:PRESET`: the job as its DeepSpeed config runs it, predicted first; then
// the smallest change of that config that makes it fit the card and keeps exposed communication within --need %
// of the step; --emit-deepspeed writes the changed file. Every candidate is the user's file edited and read back
// through the same reader (deepspeed.ts), so what is predicted for it is what the written file says.
import { writeFileSync } from 'node:fs';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { textTable } from '../shared/accounting/table.js';
import { ConfigError, type SchemeName } from '../shared/control/run-config.js';
import { predictStep, type Link, type StepPrediction } from '../shared/predict/step-prediction.js';
import { schemeRefusal, schemeTitle } from '../shared/training/schemes/table.js';
import { activationBytes } from '../shared/whatif/model-passes.js';
import { runDevice } from '../shared/whatif/preset.js';
import type { Settings } from './config-mapping.js';
import { readDeepspeedConfig, type DsContext } from './deepspeed.js';
import { cardMemory, whatIfConfig, type WhatIfPlanArgs } from './plan-whatif.js';
import { jobCandidates, withEdits, type Candidate, type JobNow } from './ds-candidates.js';

/** The exposed share a change aims under when --need is not given, percent of the step. */
export const DEFAULT_NEED = 10;

export interface ChangeArgs extends WhatIfPlanArgs {
  deepspeed: string;
  dsJson: Record<string, unknown>; // the file as read
  dsContext: DsContext;
  need?: number;
  emitDeepspeed?: string;
}

/** One config's prediction. */
interface Outcome {
  scheme: SchemeName;
  step: StepPrediction;
  memory: number; // states at the peak and activations, per GPU
  card: number;
}

const share = (o: Outcome) => o.step.exposedMs / o.step.stepMs;
const meets = (o: Outcome, need: number) => o.memory <= o.card && share(o) <= need / 100;

/** The scheme a DeepSpeed config runs: its stage (beside DP as the baseline in `--scheme`), or MiCS's HSDP. */
function jobScheme(set: Settings): SchemeName {
  const list = (set.scheme ?? 'dp').split(',');
  return list[list.length - 1] as SchemeName;
}

/** The prediction of a config's settings on this device and link, or why that config cannot run. */
function predictSettings(a: ChangeArgs, set: Settings, link: Link, intra: Link): Outcome | string {
  const scheme = jobScheme(set);
  // `a` holds the command line's options alone: each file's settings go on them afresh
  const args = { ...a, ...set, scheme, shardGroup: set.shardGroup ?? 0 };
  // a file whose settings cannot run together here (ZeRO++'s quantized weights with --lora, say) is a row that
  // says so, and the search goes on to the changes that can: not a refusal after the table
  let config: ReturnType<typeof whatIfConfig>;
  try {
    config = whatIfConfig(args);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  const refusal = schemeRefusal(scheme, config);
  if (refusal) return refusal;
  const { cost, device } = runDevice(config);
  const plan = new RunPlan(config, a.world);
  const rows = config.batch / (a.world * config.accumulate);
  const memory = plan.memory(scheme).peak + activationBytes(plan.gpu, rows, config.recompute);
  return { scheme, step: predictStep(plan, scheme, cost, link, intra), memory, card: cardMemory(a, device).bytes };
}

/** A file's settings as the reader makes them (the command line's flags winning, as in a run). */
function settingsOf(a: ChangeArgs, json: Record<string, unknown>, explicit: (flag: string) => boolean): Settings {
  return readDeepspeedConfig(json, a.deepspeed, a.dsContext, explicit).set;
}

const gb = (b: number) => (b / 1e9).toFixed(1);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function outcomeRow(label: string, o: Outcome | string): string[] {
  if (typeof o === 'string') return [label, `cannot run: ${o}`, '', '', '', ''];
  const fits = o.memory <= o.card ? 'yes' : `NO (${gb(o.card)})`;
  return [label, schemeTitle(o.scheme), gb(o.memory), fits, o.step.stepMs.toFixed(1), `${o.step.exposedMs.toFixed(1)} (${pct(share(o))})`];
}

interface Tried {
  c: Candidate;
  o: Outcome;
}

/** The candidates that meet the aim, fewest keys changed first, then the fastest step. */
function ranked(a: ChangeArgs, now: JobNow, link: Link, intra: Link, need: number, explicit: (flag: string) => boolean): { tried: Tried[]; met: Tried[] } {
  const tried: Tried[] = [];
  for (const c of jobCandidates(a.dsJson, now)) {
    let o: Outcome | string;
    try {
      o = predictSettings(
        a,
        settingsOf(a, withEdits(a.dsJson, c.edits), (f) => !c.flags.includes(f) && explicit(f)),
        link,
        intra,
      );
    } catch (err) {
      if (err instanceof ConfigError || err instanceof RangeError) continue; // a change this job cannot take (its world, its model)
      throw err;
    }
    if (typeof o !== 'string') tried.push({ c, o });
  }
  const met = tried.filter((t) => meets(t.o, need)).sort((x, y) => x.c.size - y.c.size || x.o.step.stepMs - y.o.step.stepMs);
  return { tried, met };
}

/** The job as configured, and the smallest change that meets --need (written with --emit-deepspeed); `refused`:
 *  why nothing was written where a file was asked for. */
export function changePlan(a: ChangeArgs, link: Link, intra: Link, explicit: (flag: string) => boolean, width = Infinity): { text: string; refused?: string } {
  const need = a.need ?? DEFAULT_NEED;
  const fit = { width, noteColumns: [0, 1] }; // on a narrow screen each change's keys (and why a file cannot run) go under the table
  const set = settingsOf(a, a.dsJson, explicit);
  const configured = predictSettings(a, set, link, intra);
  const head = [['', 'scheme', 'GB per GPU', 'fits', 'step ms', 'exposed ms (share)']];
  // offload: the step's time past its compute holds the host's copies and Adam too, and the aim counts them
  const exposed = set.offload ? "exposed time (the network's, the host's copies and Adam)" : 'exposed communication';
  const lines = [`${a.deepspeed} as configured, and what to change so that it fits and ${exposed} is at most ${need}% of the step:`];
  if (typeof configured !== 'string' && meets(configured, need)) {
    lines.push(textTable(head, [outcomeRow('as configured', configured)], fit), `it meets that as configured: nothing to change.`);
    if (a.emitDeepspeed) lines.push(emit(a, a.dsJson, 'unchanged'));
    return { text: lines.join('\n') };
  }
  const now = { world: a.world, accumulate: set.accumulate ?? a.accumulate, batch: set.batch ?? a.batch, hidden: a.dsContext.hidden, shardGroup: a.shardGroup };
  const { tried, met } = ranked(a, now, link, intra, need, explicit);
  const best = met[0];
  // the fewest keys changed, fastest first; where none meets the aim, the closest that fit
  const closest = tried.filter((t) => t.o.memory <= t.o.card).sort((x, y) => share(x.o) - share(y.o));
  const shown = best ? met.filter((t) => t.c.size === best.c.size).slice(0, 5) : closest.slice(0, 3);
  lines.push(textTable(head, [outcomeRow('as configured', configured), ...shown.map((t) => outcomeRow(t.c.label, t.o))], fit));
  if (!best) {
    lines.push(
      `no change of one or two keys (stage, MiCS or hpZ partition, accumulation, buckets, overlap) meets it on this device and link${shown.length ? ': the closest that fit are shown' : ''}.`,
    );
    const refused = a.emitDeepspeed ? `--emit-deepspeed ${a.emitDeepspeed}: no change meets --need ${need}%, so none is written` : undefined;
    return { text: lines.join('\n'), refused };
  }
  lines.push(
    `smallest change: ${best.c.label}${best.c.flags.length ? ` (and drop ${best.c.flags.join(', ')} from the command line: a flag wins over the file)` : ''}`,
  );
  if (a.emitDeepspeed) lines.push(emit(a, withEdits(a.dsJson, best.c.edits), best.c.label));
  return { text: lines.join('\n') };
}

function emit(a: ChangeArgs, json: Record<string, unknown>, what: string): string {
  writeFileSync(a.emitDeepspeed!, `${JSON.stringify(json, null, 2)}\n`);
  return `written: ${a.emitDeepspeed} (${what}; every other key as ${a.deepspeed} has it)`;
}
