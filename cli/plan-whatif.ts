// `zerowire plan --compute model:PRESET`: a run predicted on a link (rate, latency) with a modeled device,
// scheme by scheme: modeled compute, communication, what stays exposed, the step, and whether model states
// and activations fit the device; with --run REPORT, the prediction beside what that what-if run measured.
import type { ModelArgs } from './model-options.js';
import { parseBytes } from './sizes.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { predictStep, type Link, type StepPrediction } from '../shared/predict/step-prediction.js';
import { readReport } from '../shared/accounting/report-file.js';
import type { Report } from '../shared/accounting/report.js';
import { textTable } from '../shared/accounting/table.js';
import { ALL_SCHEMES, ConfigError, type RunConfig, type SchemeName } from '../shared/control/run-config.js';
import { makeRunConfig } from './run-config-options.js';
import { frozenRefused, SCHEME_TABLE, schemeRefusal, schemeTitle } from '../shared/training/schemes/table.js';
import { withHostAdamRate } from './offload-options.js';
import { activationBytes, tokensOf } from '../shared/whatif/model-passes.js';
import { runDevice } from '../shared/whatif/preset.js';
import { linkRateMbit } from '../shared/transport/link-probe.js';

export interface WhatIfPlanArgs extends ModelArgs {
  compute: string;
  device?: string; // a datasheet's JSON, in place of --compute model:PRESET
  world: number;
  batch: number;
  accumulate: number;
  recompute: boolean;
  recomputeRegather?: boolean;
  wireDtype: string;
  overlap: string;
  bucketMib: number;
  chunkKib: number;
  tflops?: number;
  mfu?: number;
  shardGroup: number; // hsdp too, over groups of this many ranks (0: not)
  lora?: string; // fine-tuning, as local's options
  loraTargets?: string;
  freeze?: string;
  memory?: string; // --memory: the card's memory instead of the preset's
  /** One job as its config runs it (plan-change.ts): its scheme, prefetch and ZeRO++ components; absent:
   *  every scheme, each with the defaults. */
  scheme?: string;
  gatherAhead?: number;
  qwz?: boolean;
  hpz?: boolean;
  qgz?: boolean;
  offload?: string; // --offload (cli/offload-options.ts): the schemes that can offload, offloading
  offloadDpu?: boolean;
  hostAdamGparams?: number;
}

const gb = (b: number) => (b / 1e9).toFixed(1);

/** The memory a GPU has for this prediction: --memory where given (a card of another size than the preset's,
 *  or what is left of it), else the preset's; and how the table's header says which. */
export function cardMemory(a: { memory?: string }, device: { memoryGB: number; title: string }): { bytes: number; label: string } {
  if (a.memory === undefined) return { bytes: device.memoryGB * 1e9, label: `${device.memoryGB} GB card` };
  const bytes = parseBytes(a.memory);
  return { bytes, label: `--memory ${gb(bytes)} GB, not the card's ${device.memoryGB}` };
}

/** The run config `local` would make of these options (the schemes and the schedule as a run has them). */
export function whatIfConfig(a: WhatIfPlanArgs): RunConfig {
  // the schemes a run of these options can hold: those that need groups where there are groups, and none the
  // table refuses for frozen weights (ZeRO++'s, DeepSpeed's MixZ++, is not built), as `local` leaves them out
  const frozen = Boolean(a.lora || a.freeze);
  const all = ALL_SCHEMES.filter((s) => (!SCHEME_TABLE[s].needsGroups || a.shardGroup) && !(frozen && frozenRefused(s)));
  // with --offload, the schemes that can (DP cannot; parameters are ZeRO-3's and HSDP's)
  const offload = a.offload === undefined ? undefined : { params: /params/.test(a.offload), dpu: false };
  const can = (s: SchemeName) => schemeRefusal(s, { offload }) === null; // the table's rule, as --offload refuses
  const config = makeRunConfig({
    scheme: a.scheme ?? (a.offload === undefined ? all : all.filter(can)).join(','),
    shardGroup: a.shardGroup,
    model: a.model,
    hfConfig: a.hfConfig,
    seq: a.seq,
    ropeTheta: a.ropeTheta,
    rmsEps: a.rmsEps,
    steps: 1,
    batch: a.batch,
    accumulate: a.accumulate,
    lr: 1e-3,
    seed: 0,
    samples: 1,
    wireDtype: a.wireDtype,
    unit: 'layer',
    chunkKib: a.chunkKib,
    timeout: 60,
    overlap: a.overlap,
    bucketMib: a.bucketMib,
    gatherAhead: a.gatherAhead,
    qwz: a.qwz,
    hpz: a.hpz,
    qgz: a.qgz,
    compute: a.compute,
    device: a.device,
    threads: '1',
    recompute: a.recompute,
    recomputeRegather: a.recomputeRegather,
    tflops: a.tflops,
    mfu: a.mfu,
    lora: a.lora,
    loraTargets: a.loraTargets,
    freeze: a.freeze,
    offload: a.offload,
    offloadDpu: a.offloadDpu,
    hostAdamGparams: a.hostAdamGparams,
  });
  return withHostAdamRate(config, a.world, a.shardGroup || a.world); // a host's ranks share its cores
}

interface Predicted {
  scheme: SchemeName;
  step: StepPrediction;
  states: number;
  activations: number;
  host: number; // offload: the model states a rank's host holds for it
}

/** `intra`: the links between ranks of one host (the hybrid's group ring). */
function predictAll(plan: RunPlan, link: Link, intra: Link): Predicted[] {
  const c = plan.config;
  const { cost } = runDevice(c);
  const rows = c.batch / (plan.world * c.accumulate);
  return c.schemes.map((scheme) => ({
    scheme,
    step: predictStep(plan, scheme, cost, link, intra),
    states: plan.memory(scheme).peak,
    host: plan.memory(scheme).hostTotal,
    activations: activationBytes(plan.gpu, rows, c.recompute),
  }));
}

export function whatIfPlan(a: WhatIfPlanArgs, link: Link, intra: Link): string {
  const config = whatIfConfig(a);
  const { device } = runDevice(config);
  const plan = new RunPlan(config, a.world);
  const { bytes: card, label } = cardMemory(a, device);
  const predicted = predictAll(plan, link, intra);
  const tokens = tokensOf(plan.gpu, config.batch);
  const head = [
    ['', `per GPU GB (${label})`, '', '', 'predicted ms per step', '', '', '', ''],
    ['scheme', 'states', 'activations', 'fits', 'compute', 'comm', 'exposed', 'step', 'tokens/s'],
  ];
  const off = config.offload;
  const perHost = a.shardGroup || a.world; // ranks sharing a host's memory
  if (off) {
    head[0].splice(4, 0, `host GB (${perHost} ranks)`, 'offload ms', '');
    head[1].splice(4, 0, 'held', 'PCIe', 'host Adam');
  }
  const body = predicted.map((p) => [
    schemeTitle(p.scheme),
    gb(p.states),
    gb(p.activations),
    p.states + p.activations <= card ? 'yes' : `NO (${gb(p.states + p.activations)})`,
    ...(off ? [gb(p.host * perHost), p.step.offload!.pcieMs.toFixed(1), p.step.offload!.hostAdamMs.toFixed(1)] : []),
    p.step.computeMs.toFixed(1),
    p.step.commMs.toFixed(1),
    p.step.exposedMs.toFixed(1),
    p.step.stepMs.toFixed(1),
    ((tokens * 1000) / p.step.stepMs).toFixed(0),
  ]);
  const rowsPerRank = config.batch / (a.world * config.accumulate);
  return [
    `${plan.spec.describe()} (${plan.spec.params.toExponential(3)} parameters) on ${a.world} ${device.title} (modeled${device.calibrated ? '' : ' from its datasheet, not calibrated on it'}; docs/what-if.md), global batch ${config.batch} (${rowsPerRank} per rank${config.accumulate > 1 ? ` in each of ${config.accumulate} micro-batches` : ''}), ring links of ${link.gbit} Gbit/s and ${link.latencyUs} µs, overlap ${config.overlap ? 'on' : 'off'}`,
    textTable(head, body),
    ...(off
      ? [
          `offload (--offload optimizer${off.params ? ',params' : ''}${off.dpu ? ', --offload-dpu' : ''}): states are the device's; held: what a host holds for its ${perHost} ranks (masters, moments, the fp32 gradient${off.params ? ', the 16-bit shard' : ''}); PCIe: the host link's busy time at ${runDevice(config).device.hostLinkGBps} GB/s each way (gradients down behind the backward pass, parameters up); host Adam at ${off.hostAdamGparams!.toPrecision(3)}e9 parameters/s per rank (${off.hostAdamMeasured ?? 'given'})${off.dpu ? ', behind the next step' : ", on the step's path"}; exposed: the step's time past its compute, the network's and the host's (copies, Adam) together.`,
        ]
      : []),
    `states: model states at the step's peak (${config.wireDtype} params and grads, fp32 master, m, v); activations as a bf16 framework with flash attention keeps them (no T x T scores; ${config.recompute ? 'checkpointed: each block its input, one block its insides' : "every block's insides"}, plus fp32 logits); compute modeled; comm: each ring collective at steps x latency + bytes (with frame and TCP/IP overhead) at the link rate, one collective at a time per ring.`,
  ].join('\n');
}

/** The slowest link the run's pre-flight measured: the ring goes at its pace. Each link read as `simulate
 *  --run` reads it (linkRateMbit: between hosts the best of its readings; one stream alone can wait out a TCP
 *  loss, 650 against 909 Mbit/s on one lan.sh link). Latency: half its round trip. */
function measuredLink(report: Report): (Link & { measured: true }) | null {
  const links = report.network?.preflight?.links ?? [];
  if (!links.length) return null;
  const host = (r: number) => report.ranks[r]?.host;
  const rate = (l: (typeof links)[number]) => linkRateMbit(l, host(l.from) !== host(l.to));
  const slowest = links.reduce((a, b) => (rate(b) < rate(a) ? b : a));
  return { gbit: rate(slowest) / 1000, latencyUs: (slowest.rttMs * 1000) / 2, measured: true as const };
}

/** The prediction for a what-if run's own config and link, beside what it measured. */
export function compareWithRun(file: string, given: Link | null, intra: Link): string {
  const report = readReport(file, '--run');
  if (!report.device) throw new ConfigError(`--run ${file}: not a what-if run (its compute was not modeled: no --compute model:PRESET)`);
  const link = given ?? measuredLink(report);
  if (!link) throw new ConfigError(`--run ${file}: its run had no pre-flight (--preflight off): give --gbit and --latency-us`);
  const plan = new RunPlan(report.config, report.world);
  const predicted = new Map(predictAll(plan, link, intra).map((p) => [p.scheme, p.step]));
  const head = [
    ['', 'step ms', '', '', 'exposed ms', '', 'compute ms', ''],
    ['scheme', 'predicted', 'measured', 'error', 'predicted', 'measured', 'modeled', 'measured'],
  ];
  const body = report.rows
    .filter((x) => predicted.has(x.scheme))
    .map((x) => {
      const p = predicted.get(x.scheme)!;
      return [
        x.title,
        p.stepMs.toFixed(1),
        x.time.stepMs.toFixed(1),
        `${((100 * (p.stepMs - x.time.stepMs)) / x.time.stepMs).toFixed(1)}%`,
        p.exposedMs.toFixed(1),
        x.time.exposedMs.toFixed(1),
        p.computeMs.toFixed(1),
        x.time.computeMs.toFixed(1),
      ];
    });
  return [
    `${file}: ${plan.spec.describe()} on ${report.world} ranks, ${report.device.title} (modeled), predicted for links of ${link.gbit.toPrecision(3)} Gbit/s and ${link.latencyUs.toFixed(0)} µs${'measured' in link ? " (the slowest link the run's pre-flight measured)" : ''}`,
    textTable(head, body),
  ].join('\n');
}
