// The side-by-side report: every scheme's measured cost next to its theory.
import { waitAndTransfer } from './clock.js';
import { MODEL_BANDS } from '../tensor/memory-ledger.js';
import type { SchemeSummary } from '../control/messages.js';
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { isHybrid, isReplicated, schemeTitle, takesComponents } from '../training/schemes/table.js';
import { crossHostLinks, linkCrossesHosts } from './ring-links.js';
import type { RingName } from '../transport/ring.js';
import type { RunPlan } from './run-plan.js';
import { finalParameters } from './final-weights.js';
import { quantError, type QuantErrors } from './quant-error.js';
import { agreementOf, type Agreement } from './agreement.js';
import { networkReport, type NetworkReport, type Preflight } from './links.js';
import { deviceNote, whatIfRow, type DeviceNote, type WhatIfRow } from './whatif-report.js';
import { offloadRow, type OffloadRow } from './offload-row.js';
import type { SimulationNote } from './simulated.js';

export interface RankRecord {
  rank: number;
  address: string;
  peerPort: number;
  host: string; // what the ring grouped by
  hostname: string;
  pid: number;
}

export interface SchemeRow {
  scheme: SchemeName;
  title: string;
  world: number;
  params: number; // all of the model's
  trainableParams: number; // of those, what trains (fewer under LoRA or --freeze)
  paddedParams: number;
  resident: { theory: number; measured: number }; // bytes per parameter, between steps
  peak: { theory: number; measured: number; transientBand: string | null }; // bytes per parameter, worst moment
  // Bytes, on the rank that held most: the theory's bands; everything the ledger tracked at its worst moment
  // (model states, transients, staging, compute scratch, receive buffers); what the process reported
  // (ArrayBuffers + WebAssembly memories, absolute, so it includes what the run held before this scheme).
  // What the forward pass keeps for the backward pass, bytes per rank: the ledger's peak of the band (the
  // rank that held most), and the model's own count for this rank's share of the batch. ZeRO shards none of it.
  activations: { measured: number; estimate: number };
  memory: { theoryBands: Record<string, number>; tracked: { bytes: number; bands: Record<string, number> }; process: number };
  // bytes per rank per step; frozenTheory: of the theory, the frozen parameters' gathers (ZeRO-3, HSDP)
  sentPerStep: { theory: number; frozenTheory: number; payload: number; frame: number; socket: number; iface: number | null };
  // of the payload, what went over links that leave the sender's host (mean per rank per step)
  interHost: HostBytes;
  // of the payload, what went over links between ranks of one host (theory: the rest of it)
  intraHost: HostBytes;
  ratioToDp: number | null; // payload bytes vs DP's
  offload?: OffloadRow; // --offload: device-host copies and the host's model states (offload-row.ts)
  // mean per step over ranks (first step excluded when there are more); exposed communication split on the
  // run's common clock into wait (until the last rank entered each collective) and transfer (from then on)
  // compute is split into its forward, backward and optimizer spans; hidden counts only data that really
  // arrived while this rank computed (wireMs: time any data was arriving), not collectives merely pending
  time: {
    stepMs: number;
    computeMs: number;
    forwardMs: number;
    backwardMs: number;
    optimizerMs: number;
    commMs: number;
    exposedMs: number;
    wireMs: number;
    hiddenMs: number;
    hiddenBytes: number;
    waitMs: number | null;
    transferMs: number | null;
  };
  split: { waitByRank: number[]; transferByRank: number[]; clockUncertaintyMs: number } | null; // per rank, ms per step
  losses: number[]; // mean over ranks, per step
  finalLoss: number;
  maxParamDiff: number; // max |final params - first scheme's final params|
  whatif: WhatIfRow | null; // --compute model:PRESET: modeled compute, MFU, bandwidths, fit on the device
  // ZeRO++'s qwZ, per step over every rank's quantized shards (the gathered weights): the largest error over
  // the largest magnitude, and the summed error over the summed magnitude
  quantError: QuantErrors | null;
}

export interface Report {
  tool: 'zerowire';
  createdAt: string;
  world: number;
  config: RunConfig;
  ranks: RankRecord[];
  ring: { crossHost: boolean[] }; // per rank: whether its link to the next rank leaves its host
  notes: string[]; // how the coordinator resolved the run (a scheme left out, and why)
  device: DeviceNote | null; // the modeled accelerator (--compute model:PRESET), or null: compute ran here
  links: LinkSecurity;
  network: NetworkReport; // which link or host was slow: pre-flight, achieved rates, lateness (links.ts)
  rows: SchemeRow[];
  agreement: Agreement | null; // each scheme against the first, with the bound the pair earns (agreement.ts); null where compute is modeled: no values, no losses
  perRank: Record<string, Omit<SchemeSummary, 'master'>[]>;
  simulated?: SimulationNote; // `zerowire simulate`: the network modeled, the algorithms chosen (simulated.ts)
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Each rank's wait and transfer per step (mean over the timed steps), from the collectives' entries and
 *  exits on the common clock; null when the ranks' collectives do not pair up. */
function splitExposed(sums: SchemeSummary[]): SchemeRow['split'] {
  const steps = sums[0].steps.length > 1 ? sums[0].steps.length - 1 : sums[0].steps.length;
  const first = sums[0].steps.length - steps;
  const wait = new Array<number>(sums.length).fill(0);
  const transfer = new Array<number>(sums.length).fill(0);
  for (let t = first; t < sums[0].steps.length; t++) {
    if (sums.some((s) => !s.steps[t])) return null;
    const got = waitAndTransfer(
      sums.map((s) => s.steps[t].collectives.map((c) => c.entry)),
      sums.map((s) => s.steps[t].collectives.map((c) => c.exit)),
    );
    if (!got) return null;
    got.wait.forEach((w, r) => (wait[r] += w / steps));
    got.transfer.forEach((x, r) => (transfer[r] += x / steps));
  }
  return { waitByRank: wait, transferByRank: transfer, clockUncertaintyMs: Math.max(...sums.map((s) => s.clock.uncertaintyMs)) };
}

/** Bytes per rank per step, by where they went: theory, the collectives' payload counted by the ring each
 *  ran on, and the hosts' own interface counters (--iface: what left each host through the ring's interface,
 *  or stayed on it through loopback), each host counted once however many ranks share it, over all ranks;
 *  null where the counters were not read. Counters include TCP/IP headers, ACKs and the control plane. */
export interface HostBytes {
  theory: number;
  measured: number;
  counted: number | null;
  control?: number | null; // of `counted` between hosts: what the ranks wrote to the coordinator (step reports, clock)
}

/** Bytes each rank wrote to the coordinator per step (mean), where the ranks said. */
function controlPerStep(sums: SchemeSummary[]): number | null {
  return sums.every((s) => s.control) ? mean(sums.map((s) => s.control!.sent)) / Math.max(1, sums[0].steps.length) : null;
}

/** Per rank per step, from one counter per host: the largest of its ranks' (they read the same interface). */
function hostCounter(sums: SchemeSummary[], hosts: string[], read: (s: SchemeSummary) => number | undefined): number | null {
  const values = sums.map(read);
  if (values.some((v) => v === undefined)) return null;
  const perHost = new Map<string, number>();
  sums.forEach((s, i) => perHost.set(hosts[s.rank], Math.max(perHost.get(hosts[s.rank]) ?? 0, values[i]!)));
  const total = [...perHost.values()].reduce((a, b) => a + b, 0);
  return total / sums.length / Math.max(1, sums[0].steps.length);
}

/** Payload per rank per step over links that leave the sender's host, and over links inside one: theory (each
 *  ring's bytes where its link crosses), measured (each collective's bytes by the ring it ran on) and counted
 *  (the hosts' interfaces). Nothing leaves a run on one host. */
function hostBytes(plan: RunPlan, scheme: SchemeName, sums: SchemeSummary[], hosts: string[]): Pick<SchemeRow, 'interHost' | 'intraHost'> {
  const G = isHybrid(scheme) ? plan.shardWorld(scheme) : plan.config.shardGroup || plan.world; // the group ring's: the hybrid's or hpZ's
  const crosses = (ring: RingName, r: number) => (linkCrossesHosts(ring, r, hosts, G) ? 1 : 0);
  const t = plan.trafficSplit(scheme);
  const own = (r: number) => (isHybrid(scheme) ? t.group * crosses('group', r) : t.group * crosses('main', r)) + t.cross * crosses('cross', r);
  const theory = mean(hosts.map((_, r) => own(r) + t.host * crosses('group', r)));
  const measured = mean(
    sums.map(
      (s) =>
        s.steps.reduce((n, st) => n + st.collectives.reduce((m, c) => m + c.payload * crosses((c.ring ?? 'main') as RingName, s.rank), 0), 0) /
        Math.max(1, s.steps.length),
    ),
  );
  const all = plan.traffic(scheme);
  const payload = mean(sums.map((s) => s.steps.reduce((n, st) => n + st.sent.payload, 0) / Math.max(1, s.steps.length)));
  return {
    interHost: { theory, measured, counted: hostCounter(sums, hosts, (s) => s.iface?.tx), control: controlPerStep(sums) },
    intraHost: { theory: all - theory, measured: payload - measured, counted: hostCounter(sums, hosts, (s) => s.loopback?.tx) },
  };
}

/** A step's compute time in one pass. */
const spanMs = (x: SchemeSummary['steps'][number], pass: string) => x.units.reduce((t, u) => t + (u.pass === pass ? u.end - u.start : 0), 0);

/** Mean times per step over every rank (the first step, which warms up, left out). */
function stepTimes(sums: SchemeSummary[], split: SchemeRow['split']): SchemeRow['time'] {
  const timed = (s: SchemeSummary) => (s.steps.length > 1 ? s.steps.slice(1) : s.steps);
  const each = (f: (x: SchemeSummary['steps'][number]) => number) => mean(sums.flatMap((s) => timed(s).map(f)));
  return {
    stepMs: each((x) => x.stepMs),
    computeMs: each((x) => x.computeMs),
    commMs: each((x) => x.commMs),
    exposedMs: each((x) => x.exposedMs),
    forwardMs: each((x) => spanMs(x, 'forward')),
    backwardMs: each((x) => spanMs(x, 'backward')),
    optimizerMs: each((x) => spanMs(x, 'optimizer')),
    wireMs: each((x) => x.wire.wireMs),
    hiddenMs: each((x) => x.wire.hiddenMs),
    hiddenBytes: each((x) => x.wire.hiddenBytes),
    waitMs: split ? mean(split.waitByRank) : null,
    transferMs: split ? mean(split.transferByRank) : null,
  };
}

/** One scheme's row: its measured figures next to theory, and how far its final weights are from `first`'s
 *  (the first scheme's, or its own). */
function schemeRow(plan: RunPlan, scheme: SchemeName, sums: SchemeSummary[], firstFinal: Float32Array | null, hosts: string[]): SchemeRow {
  const { config, spec, world } = plan;
  const sizes = plan.sizesFor(scheme);
  const P = spec.params;
  const split = splitExposed(sums);
  const mem = plan.memory(scheme);
  const perStep = (f: (s: SchemeSummary) => number) => mean(sums.map(f)) / Math.max(1, sums[0].steps.length);
  // Modeled compute has no values: no weights to compare, no loss.
  const final = plan.modeled ? null : finalParameters(plan, scheme, sums);
  let diff = 0;
  if (final) for (let i = 0; i < P; i++) diff = Math.max(diff, Math.abs(final[i] - (firstFinal ?? final)[i]));
  const losses = plan.modeled ? [] : sums[0].steps.map((_, i) => mean(sums.map((s) => s.steps[i].loss ?? NaN))); // fewer than `steps` after a resume
  const time = stepTimes(sums, split);
  return {
    scheme,
    title: `${schemeTitle(scheme)}${takesComponents(scheme) && plan.zeroPP(scheme) ? ` (${componentNames(plan.zeroPP(scheme)!)})` : ''}`,
    world,
    params: P,
    trainableParams: sizes.params,
    paddedParams: sizes.paddedTotal,
    resident: { theory: mem.resident / P, measured: Math.max(...sums.map((s) => MODEL_BANDS.reduce((t, b) => t + (s.memory.resident[b] ?? 0), 0))) / P },
    peak: { theory: mem.peak / P, measured: Math.max(...sums.map((s) => s.memory.peak)) / P, transientBand: mem.transientBand },
    activations: {
      measured: Math.max(...sums.map((s) => s.memory.peakPerBand.activations ?? 0)),
      estimate: spec.activationBytes(config.batch / (world * config.accumulate), config.recompute),
    },
    memory: {
      theoryBands: { ...mem.bands, ...(mem.transientBand ? { [mem.transientBand]: mem.transient } : {}) },
      tracked: sums.reduce((best, s) => (s.memory.peakAll > best.bytes ? { bytes: s.memory.peakAll, bands: s.memory.peakAllBands } : best), {
        bytes: 0,
        bands: {} as Record<string, number>,
      }),
      process: Math.max(...sums.map((s) => s.memory.processPeak)),
    },
    sentPerStep: {
      theory: plan.traffic(scheme),
      frozenTheory: plan.frozenTraffic(scheme),
      payload: perStep((s) => s.steps.reduce((t, x) => t + x.sent.payload, 0)),
      frame: perStep((s) => s.steps.reduce((t, x) => t + x.sent.frame, 0)),
      socket: perStep((s) => s.socket.sent),
      iface: sums.every((s) => s.iface) ? perStep((s) => s.iface!.tx) : null,
    },
    ...hostBytes(plan, scheme, sums, hosts),
    ...offloadRow(plan, scheme, sums, mem.hostTotal, perStep),
    ratioToDp: null,
    time,
    split,
    losses,
    finalLoss: losses[losses.length - 1] ?? NaN,
    maxParamDiff: diff,
    whatif: whatIfRow(plan, scheme, sums, time.stepMs),
    quantError: quantError(sums),
  };
}

const componentNames = (z: { qwz: boolean; hpz: boolean; qgz: boolean }) => [z.qwz && 'qwZ', z.hpz && 'hpZ', z.qgz && 'qgZ'].filter(Boolean).join(', ');

/** Whether the ring links were encrypted, and with what (as every rank's links negotiated it). */
interface LinkSecurity {
  encrypted: boolean;
  ciphers: string[]; // 'TLSv1.3 TLS_AES_256_GCM_SHA384', one entry per distinct negotiation
  plainRanks: number; // ranks whose links were not encrypted (0 on an encrypted run)
}

function linkSecurity(summaries: Map<SchemeName, SchemeSummary[]>): LinkSecurity {
  const all = [...summaries.values()].flat();
  const ciphers = [...new Set(all.flatMap((s) => (s.link ? [`${s.link.protocol} ${s.link.cipher}`] : [])))];
  const plainRanks = new Set(all.filter((s) => !s.link).map((s) => s.rank)).size;
  return { encrypted: all.length > 0 && plainRanks === 0, ciphers, plainRanks };
}

export function buildReport(
  plan: RunPlan,
  ranks: RankRecord[],
  summaries: Map<SchemeName, SchemeSummary[]>,
  notes: string[] = [],
  preflight: Preflight | null = null,
): Report {
  const { config, world } = plan;
  const rows: SchemeRow[] = [];
  let first: Float32Array | null = null;
  for (const [scheme, sums] of summaries) {
    const row = schemeRow(
      plan,
      scheme,
      sums,
      first,
      ranks.map((x) => x.host),
    );
    if (!plan.modeled) first ??= finalParameters(plan, scheme, sums);
    rows.push(row);
  }
  const dp = rows.find((r) => isReplicated(r.scheme));
  for (const r of rows) r.ratioToDp = dp && dp.sentPerStep.payload > 0 ? r.sentPerStep.payload / dp.sentPerStep.payload : null;
  const device = deviceNote(plan);
  const perRank: Report['perRank'] = {};
  for (const [scheme, sums] of summaries) perRank[scheme] = sums.map(({ master: _master, ...rest }) => rest);
  return {
    tool: 'zerowire',
    createdAt: new Date().toISOString(),
    world,
    config,
    ranks,
    ring: { crossHost: crossHostLinks(ranks.map((x) => x.host)) },
    notes,
    device,
    links: linkSecurity(summaries),
    network: networkReport(preflight, ranks, summaries),
    rows,
    agreement: device ? null : agreementOf(rows, config),
    perRank,
  };
}
