// The side-by-side report: every scheme's measured cost next to its theory.
import { bytesPerElement } from '../tensor/dtype.js';
import { waitAndTransfer } from './clock.js';
import { ShardLayout } from '../training/layout.js';
import { MODEL_BANDS } from '../tensor/memory-ledger.js';
import { modelSpec } from '../training/model.js';
import type { SchemeSummary } from '../control/messages.js';
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { SCHEME_TABLE, schemeTitle } from '../training/schemes/table.js';
import { textTable } from './table.js';
import { crossHostLinks } from './ring-links.js';
import { memoryTheory, trafficTheory } from './theory.js';

export interface RankRecord {
  rank: number;
  address: string;
  peerPort: number;
  host: string; // what the ring grouped by
  hostname: string;
  pid: number;
}

interface SchemeRow {
  scheme: SchemeName;
  title: string;
  world: number;
  params: number;
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
  sentPerStep: { theory: number; payload: number; frame: number; socket: number; iface: number | null }; // bytes per rank per step
  ratioToDp: number | null; // payload bytes vs DP's
  // mean per step over ranks (first step excluded when there are more); exposed communication split on the
  // run's common clock into wait (until the last rank entered each collective) and transfer (from then on)
  time: { stepMs: number; computeMs: number; commMs: number; exposedMs: number; overlappedMs: number; waitMs: number | null; transferMs: number | null };
  split: { waitByRank: number[]; transferByRank: number[]; clockUncertaintyMs: number } | null; // per rank, ms per step
  losses: number[]; // mean over ranks, per step
  finalLoss: number;
  maxParamDiff: number; // max |final params - first scheme's final params|
}

export interface Report {
  tool: 'zerowire';
  createdAt: string;
  world: number;
  config: RunConfig;
  ranks: RankRecord[];
  ring: { crossHost: boolean[] }; // per rank: whether its link to the next rank leaves its host
  rows: SchemeRow[];
  agreement: { lossTolerance: number; maxLossDiff: number; maxParamDiff: number; agree: boolean };
  perRank: Record<string, Omit<SchemeSummary, 'master'>[]>;
}

/** Losses of different schemes must agree this closely: fp32 on the wire is exact up to summation order;
 *  bf16 rounds gradients and parameters differently per scheme (bucket vs whole-model reductions). */
function lossTolerance(config: RunConfig): number {
  return config.wireDtype === 'fp32' ? 1e-5 : 2e-2;
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

/** The full unpadded fp32 parameters a scheme ended with, from the ranks' master bytes. */
export function finalParameters(config: RunConfig, world: number, scheme: SchemeName, summaries: SchemeSummary[]): Float32Array {
  const spec = modelSpec(config);
  const layout = new ShardLayout(spec, world, 0, config.unit);
  const f32 = (b: Uint8Array) => new Float32Array(Uint8Array.prototype.slice.call(b).buffer);
  if (SCHEME_TABLE[scheme].shardOptimizer) return layout.assemble(summaries.map((s) => f32(s.master)));
  return layout.unpad(f32(summaries[0].master));
}

export function buildReport(config: RunConfig, world: number, ranks: RankRecord[], summaries: Map<SchemeName, SchemeSummary[]>): Report {
  const spec = modelSpec(config);
  const sizes = new ShardLayout(spec, world, 0, config.unit).sizes();
  const P = spec.params;
  const finals = new Map<SchemeName, Float32Array>();
  const rows: SchemeRow[] = [];
  for (const [scheme, sums] of summaries) {
    const flags = SCHEME_TABLE[scheme];
    const split = splitExposed(sums);
    const mem = memoryTheory(flags, sizes, config.wireDtype, config);
    const timed = (s: SchemeSummary) => (s.steps.length > 1 ? s.steps.slice(1) : s.steps);
    const perStep = (f: (s: SchemeSummary) => number) => mean(sums.map(f)) / Math.max(1, sums[0].steps.length);
    const final = finalParameters(config, world, scheme, sums);
    finals.set(scheme, final);
    const first = finals.values().next().value as Float32Array;
    let diff = 0;
    for (let i = 0; i < P; i++) diff = Math.max(diff, Math.abs(final[i] - first[i]));
    const losses = sums[0].steps.map((_, i) => mean(sums.map((s) => s.steps[i].loss))); // fewer than `steps` after a resume
    rows.push({
      scheme,
      title: schemeTitle(scheme),
      world,
      params: P,
      paddedParams: sizes.paddedTotal,
      resident: { theory: mem.resident / P, measured: Math.max(...sums.map((s) => MODEL_BANDS.reduce((t, b) => t + (s.memory.resident[b] ?? 0), 0))) / P },
      peak: { theory: mem.peak / P, measured: Math.max(...sums.map((s) => s.memory.peak)) / P, transientBand: mem.transientBand },
      activations: {
        measured: Math.max(...sums.map((s) => s.memory.peakPerBand.activations ?? 0)),
        estimate: spec.activationBytes(config.batch / world, config.recompute),
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
        theory: trafficTheory(flags, sizes, config.wireDtype),
        payload: perStep((s) => s.steps.reduce((t, x) => t + x.sent.payload, 0)),
        frame: perStep((s) => s.steps.reduce((t, x) => t + x.sent.frame, 0)),
        socket: perStep((s) => s.socket.sent),
        iface: sums.every((s) => s.iface) ? perStep((s) => s.iface!.tx) : null,
      },
      ratioToDp: null,
      time: {
        stepMs: mean(sums.flatMap((s) => timed(s).map((x) => x.stepMs))),
        computeMs: mean(sums.flatMap((s) => timed(s).map((x) => x.computeMs))),
        commMs: mean(sums.flatMap((s) => timed(s).map((x) => x.commMs))),
        exposedMs: mean(sums.flatMap((s) => timed(s).map((x) => x.exposedMs))),
        overlappedMs: mean(sums.flatMap((s) => timed(s).map((x) => Math.max(0, x.commMs - x.exposedMs)))),
        waitMs: split ? mean(split.waitByRank) : null,
        transferMs: split ? mean(split.transferByRank) : null,
      },
      split,
      losses,
      finalLoss: losses[losses.length - 1] ?? NaN,
      maxParamDiff: diff,
    });
  }
  const dp = rows.find((r) => r.scheme === 'dp');
  for (const r of rows) r.ratioToDp = dp && dp.sentPerStep.payload > 0 ? r.sentPerStep.payload / dp.sentPerStep.payload : null;
  let maxLossDiff = 0;
  for (const r of rows) for (let t = 0; t < r.losses.length; t++) maxLossDiff = Math.max(maxLossDiff, Math.abs(r.losses[t] - rows[0].losses[t]));
  const tol = lossTolerance(config);
  const perRank: Report['perRank'] = {};
  for (const [scheme, sums] of summaries) perRank[scheme] = sums.map(({ master: _master, ...rest }) => rest);
  return {
    tool: 'zerowire',
    createdAt: new Date().toISOString(),
    world,
    config,
    ranks,
    ring: { crossHost: crossHostLinks(ranks.map((x) => x.host)) },
    rows,
    agreement: { lossTolerance: tol, maxLossDiff, maxParamDiff: Math.max(0, ...rows.map((r) => r.maxParamDiff)), agree: maxLossDiff <= tol },
    perRank,
  };
}

const kb = (b: number) => (b / 1024).toFixed(1);
const f2 = (x: number) => x.toFixed(2);

/** A wait or transfer figure, or '<U' where the clock's uncertainty is larger than it: no precise wrong number. */
function splitCell(v: number | null, x: SchemeRow): string {
  if (v === null || !x.split) return '-';
  const u = x.split.clockUncertaintyMs;
  return v < u ? `<${u.toFixed(1)}` : v.toFixed(1);
}

/** Which ring links cross hosts, and what the ranks sending over them put on the wire. */
/** The overlap the run was given, for the model line. */
function overlapNote(c: RunConfig): string {
  const parts = [
    c.gatherAhead ? `ZeRO-3 gathers ${c.gatherAhead} unit(s) ahead` : '',
    c.reduceBehind ? `${c.reduceBehind} gradient reduce-scatter(s) run behind the backward pass` : '',
  ].filter(Boolean);
  return parts.length ? `, ${parts.join(', ')}` : '';
}

function ringNote(r: Report): string {
  const n = r.ranks.length;
  const links = r.ranks.map(
    (x, i) => `${i}→${(i + 1) % n} ${r.ring.crossHost[i] ? `crosses (${x.host} → ${r.ranks[(i + 1) % n].host})` : `stays on ${x.host}`}`,
  );
  const crossing = r.ring.crossHost.filter(Boolean).length;
  return `ring by host: ${crossing} of ${n} links cross hosts (each rank sends only to the next, so its bytes are that link's): ${links.join(', ')}`;
}

/** The side-by-side table (two header rows, a row per scheme) and its notes, for text and HTML alike. */
export function reportCells(r: Report): { header: string[][]; rows: string[][]; notes: string[] } {
  const c = r.config;
  const hasIface = r.rows.some((x) => x.sentPerStep.iface !== null);
  const header = [
    [
      '',
      '',
      '',
      'resident B/param',
      '',
      'peak B/param',
      '',
      'activ.',
      'sent KiB/rank/step',
      '',
      '',
      '',
      ...(hasIface ? [''] : []),
      '',
      'step ms',
      '',
      'comm',
      '',
      '',
      '',
      'final',
    ],
    [
      'scheme',
      'N',
      'params',
      'theory',
      'measured',
      'theory',
      'measured',
      'KiB',
      'theory',
      'payload',
      'frame',
      'TCP',
      ...(hasIface ? ['iface'] : []),
      'xDP',
      'total',
      'compute',
      'exposed',
      'wait',
      'transfer',
      'overlap',
      'loss',
    ],
  ];
  const rows = r.rows.map((x) => [
    x.title,
    String(x.world),
    String(x.params),
    f2(x.resident.theory),
    f2(x.resident.measured),
    f2(x.peak.theory),
    f2(x.peak.measured),
    kb(x.activations.measured),
    kb(x.sentPerStep.theory),
    kb(x.sentPerStep.payload),
    kb(x.sentPerStep.frame),
    kb(x.sentPerStep.socket),
    ...(hasIface ? [x.sentPerStep.iface === null ? '-' : kb(x.sentPerStep.iface)] : []),
    x.ratioToDp === null ? '-' : f2(x.ratioToDp),
    x.time.stepMs.toFixed(1),
    x.time.computeMs.toFixed(1),
    x.time.exposedMs.toFixed(1),
    splitCell(x.time.waitMs, x),
    splitCell(x.time.transferMs, x),
    x.time.overlappedMs.toFixed(1),
    x.finalLoss.toFixed(4),
  ]);
  const a = r.agreement;
  const z3 = r.rows.find((x) => x.scheme === 'zero3');
  const notes = [
    `model ${modelSpec(c).describe()} (${r.rows[0]?.params ?? 0} params, ${r.rows[0]?.paddedParams ?? 0} padded), ${c.steps} steps, global batch ${c.batch}, ${c.wireDtype} on the wire (${bytesPerElement(c.wireDtype)} B/element), unit = ${c.unit}, world ${r.world}${overlapNote(c)}${c.recompute ? ', activation checkpointing per block (--recompute)' : ''}`,
    `losses agree across schemes: ${a.agree ? 'yes' : 'NO'} (max |loss difference| ${a.maxLossDiff.toExponential(2)}, tolerance ${a.lossTolerance}; max |parameter difference| ${a.maxParamDiff.toExponential(2)})`,
  ];
  const hosts = new Set(r.ranks.map((x) => x.host));
  if (hosts.size > 1) notes.push(ringNote(r));
  const dp = r.rows.find((x) => x.scheme === 'dp');
  const clock = Math.max(0, ...r.rows.map((x) => x.split?.clockUncertaintyMs ?? 0));
  notes.push(
    `exposed = wait (for the last rank to enter each collective) + transfer (from then until this rank left it), on a common clock of the ranks (offsets within ±${clock.toFixed(2)} ms; '<' marks a figure smaller than that)${c.gatherAhead || c.reduceBehind ? '; with --gather-ahead or --reduce-behind collectives also run while a rank computes, so wait + transfer exceed exposed' : ''}`,
  );
  if (z3 && dp && z3.time.transferMs !== null && dp.time.transferMs !== null && dp.time.transferMs > 0)
    notes.push(
      `ZeRO-3 vs DP, transfer per step: ${z3.time.transferMs.toFixed(1)} vs ${dp.time.transferMs.toFixed(1)} ms (${(z3.time.transferMs / dp.time.transferMs).toFixed(2)}x); waiting for slower ranks is not the network's cost.`,
    );
  if (z3)
    notes.push(
      `ZeRO-3 resident ${f2(z3.resident.measured)} vs peak ${f2(z3.peak.measured)} B/param: between steps a rank holds only its shards; while a unit computes it also holds that unit's gathered working-copy (${bytesPerElement(c.wireDtype) * 8}-bit) parameters.`,
    );
  const act = r.rows[0]?.activations;
  if (act && act.measured > 0)
    notes.push(
      `activations (what the forward pass keeps for the backward pass) per rank: ${kb(act.measured)} KiB measured in every scheme, ${kb(act.estimate)} KiB by the model's count for batch/N = ${c.batch / r.world} ${modelSpec(c).kind === 'gpt' ? 'sequences' : 'rows'}: ZeRO shards the model states, not the activations (${kb(act.measured)} KiB is ${((100 * act.measured) / Math.max(1, act.measured + (dp ? dp.resident.measured * dp.params : 0))).toFixed(0)}% of what DP holds in model states and activations together)`,
    );
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  notes.push(
    `everything a rank held at its worst moment, MiB (ledger: every band, model states to receive buffers, data and idle heap | process: ArrayBuffers + WebAssembly memories): ${r.rows.map((x) => `${x.title} ${mib(x.memory.tracked.bytes)} | ${mib(x.memory.process)}`).join(', ')}`,
  );
  return { header, rows, notes };
}

export function formatReport(r: Report): string {
  const { header, rows, notes } = reportCells(r);
  return `${textTable(header, rows)}\n\n${notes.join('\n')}`;
}
