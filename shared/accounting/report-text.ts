// The report as text: the side-by-side table and the notes that say how to read it, shared by the terminal
// and the HTML page.
import { fineTuneNotes } from './finetune-text.js';
import { zeroPPNotes } from './zeropp-text.js';
import { networkText, ringFloorRates } from './links.js';
import { agreementText } from './agreement.js';
import { bytesPerElement } from '../tensor/dtype.js';
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { batchRow, modelSpec } from '../models/registry.js';
import { gathersParameters, isReplicated, schemeTitle } from '../training/schemes/table.js';
import type { HostBytes, Report, SchemeRow } from './report.js';
import { simulatedNotes, simulatedTable } from './simulated.js';
import { textTable } from './table.js';
import { wrapText } from './wrap.js';
import { columnUnit, formatBytes } from './units.js';
import { whatIfText } from './whatif-text.js';
import { placementNotes } from './placement-text.js';

const f2 = (x: number) => x.toFixed(2);

/** A wait or transfer figure, or '<U' where the clock's uncertainty is larger than it: no precise wrong number. */
function splitCell(v: number | null, x: SchemeRow): string {
  if (v === null || !x.split) return '-';
  const u = x.split.clockUncertaintyMs;
  return v < u ? `<${u.toFixed(1)}` : v.toFixed(1);
}

/** What a batch row of this run's model is called. */
const rowNoun = (c: RunConfig) => {
  const spec = modelSpec(c);
  return batchRow(spec).noun;
};

/** Where the ranks computed, as they resolved --compute. */
function computeNote(r: Report): string {
  if (r.device) return `compute modeled on ${r.device.title}, no values (--compute model:${r.device.name})`;
  const modes = new Set(Object.values(r.perRank).flatMap((sums) => sums.map((s) => s.compute ?? 'inline')));
  if (modes.size > 1) return 'compute inline on some ranks, on a worker thread on others';
  return modes.has('thread') ? 'compute on a worker thread' : 'compute inline, the event loop turning between units';
}

/** The overlap policy the run was given, for the model line. */
function overlapNote(c: RunConfig, where: string): string {
  if (!c.overlap) return ', overlap off (every collective awaited as it starts: the no-overlap baseline)';
  const parts = [
    `DP/ZeRO-1 reduce ${(c.bucketBytes / 2 ** 20).toFixed(c.bucketBytes % 2 ** 20 ? 2 : 0)} MiB buckets during the backward pass`,
    c.reduceBehind ? `ZeRO-2/3 keep ${c.reduceBehind} reduce-scatter(s) behind it` : '',
    c.gatherAhead ? `ZeRO-3 gathers ${c.gatherAhead} unit(s) ahead` : '',
  ].filter(Boolean);
  return `, overlap on (${parts.join(', ')}; ${where})`;
}

/** Ring links a note names one by one; a larger ring names the first that cross and counts the rest. */
const RING_LISTED = 8;

/** Which ring links cross hosts, and what the ranks sending over them put on the wire. */
function ringNote(r: Report): string {
  const n = r.ranks.length;
  const links = r.ranks.map(
    (x, i) => `${i}→${(i + 1) % n} ${r.ring.crossHost[i] ? `crosses (${x.host} → ${r.ranks[(i + 1) % n].host})` : `stays on ${x.host}`}`,
  );
  const crossing = r.ring.crossHost.filter(Boolean).length;
  const head = `ring by host: ${crossing} of ${n} links cross hosts (each rank sends only to the next, so its bytes are that link's)`;
  if (n <= RING_LISTED) return `${head}: ${links.join(', ')}`;
  // A large ring: the links that cross, the first few of them; every link is in the JSON's ring.
  const crossed = links.filter((_, i) => r.ring.crossHost[i]);
  const more = crossed.length - RING_LISTED;
  return `${head}: ${crossed.slice(0, RING_LISTED).join(', ')}${more > 0 ? `, and ${more} more that cross (every link: the JSON report's ring)` : ''}`;
}

/** The units of the table's size columns, each chosen to fit its largest figure. */
interface SizeUnits {
  activ: ReturnType<typeof columnUnit>;
  sent: ReturnType<typeof columnUnit>;
}

function sizeUnits(rows: readonly SchemeRow[]): SizeUnits {
  const sent = rows.flatMap((x) => [x.sentPerStep.theory, x.sentPerStep.payload, x.sentPerStep.frame, x.sentPerStep.socket, x.sentPerStep.iface ?? 0]);
  return { activ: columnUnit(rows.map((x) => x.activations.measured)), sent: columnUnit(sent) };
}

/** The table's two header rows; `got`: what the memory columns beside theory hold, a run's ledger (measured)
 *  or a simulation's. */
function tableHeader(hasIface: boolean, u: SizeUnits, got: 'measured' | 'simulated'): string[][] {
  return [
    [
      '',
      '',
      '',
      'resident B/param',
      '',
      'peak B/param',
      '',
      'activ.',
      `sent ${u.sent.name}/rank/step`,
      '',
      '',
      '',
      ...(hasIface ? [''] : []),
      '',
      'step ms',
      '',
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
      got,
      'theory',
      got,
      u.activ.name,
      'theory',
      'payload',
      'frame',
      'socket',
      ...(hasIface ? ['iface'] : []),
      'xDP',
      'total',
      'compute',
      'fwd/bwd/opt',
      'exposed',
      'wait',
      'transfer',
      'hidden',
      'loss',
    ],
  ];
}

/** One scheme's row of the table. */
function tableRow(x: SchemeRow, hasIface: boolean, u: SizeUnits, simulated: boolean): string[] {
  const kb = u.sent.cell;
  // A simulation moves payload over modeled links: no frames, sockets or arrivals to count ('-', not a 0 that
  // would read as nothing sent or no overlap).
  const counted = (f: () => string) => (simulated ? '-' : f());
  return [
    x.title,
    String(x.world),
    String(x.params),
    f2(x.resident.theory),
    f2(x.resident.measured),
    f2(x.peak.theory),
    f2(x.peak.measured),
    u.activ.cell(x.activations.measured),
    kb(x.sentPerStep.theory),
    kb(x.sentPerStep.payload),
    counted(() => kb(x.sentPerStep.frame)),
    counted(() => kb(x.sentPerStep.socket)),
    ...(hasIface ? [x.sentPerStep.iface === null ? '-' : kb(x.sentPerStep.iface)] : []),
    x.ratioToDp === null ? '-' : f2(x.ratioToDp),
    x.time.stepMs.toFixed(1),
    x.time.computeMs.toFixed(1),
    `${x.time.forwardMs.toFixed(1)}/${x.time.backwardMs.toFixed(1)}/${x.time.optimizerMs.toFixed(1)}`,
    x.time.exposedMs.toFixed(1),
    splitCell(x.time.waitMs, x),
    splitCell(x.time.transferMs, x),
    counted(() => x.time.hiddenMs.toFixed(1)),
    Number.isNaN(x.finalLoss) ? '-' : x.finalLoss.toFixed(4),
  ];
}

/** What the table needs said beside it: the run, the agreement, the clock, ZeRO-3 against DP, memory. */
function reportNotes(r: Report): string[] {
  const c = r.config;
  const a = r.agreement;
  const where = computeNote(r);
  const z3 = r.rows.find((x) => gathersParameters(x.scheme));
  const notes = [
    ...(r.simulated ? simulatedNotes(r.simulated) : []),
    `model ${modelSpec(c).describe()} (${r.rows[0]?.params ?? 0} params, ${c.adapt ? `${r.rows[0]?.trainableParams ?? 0} trainable, ${r.rows[0]?.paddedParams ?? 0} of them padded` : `${r.rows[0]?.paddedParams ?? 0} padded`}), ${c.steps} steps, global batch ${c.batch}, ${c.wireDtype} on the wire (${bytesPerElement(c.wireDtype)} B/element), unit = ${c.unit}, world ${r.world}${overlapNote(c, where)}${c.recompute ? ', activation checkpointing per block (--recompute)' : ''}`,
    r.device || !a
      ? 'losses: not computed (modeled compute has no values); the memory columns count the bands by their sizes, as the theory does, not memory this process held'
      : agreementText(a),
  ];
  if (c.accumulate > 1)
    notes.push(
      `--accumulate ${c.accumulate}: every figure per step is per optimizer step of ${c.accumulate} micro-batches of ${c.batch / (r.world * c.accumulate)} ${rowNoun(c)} per rank; payload per micro-batch on average (per optimizer step / ${c.accumulate}): ${r.rows.map((x) => `${x.title} ${formatBytes(x.sentPerStep.payload / c.accumulate)}`).join(', ')} (DP and ZeRO-1 reduce once per optimizer step, ZeRO-2 every micro-batch, ZeRO-3 gathers and reduces every micro-batch)`,
    );
  notes.push(...fineTuneNotes(r), ...zeroPPNotes(r));
  if (c.resume) notes.push(resumeNote(c.resume, c.steps));
  const hosts = new Set(r.ranks.map((x) => x.host));
  if (hosts.size > 1) {
    notes.push(ringNote(r));
    const three = (b: HostBytes) => `${formatBytes(b.theory)} | ${formatBytes(b.measured)}${b.counted === null ? '' : ` | ${formatBytes(b.counted)}`}`;
    const counted = r.rows.every((x) => x.interHost.counted !== null);
    const how = `theory | payload by the ring each collective ran on${counted ? " | the hosts' interface counters, each host once (TCP/IP headers, ACKs and the control plane included)" : ''}`;
    notes.push(
      `payload that leaves its host per rank per step (${how}): ${r.rows.map((x) => `${x.title} ${three(x.interHost)}`).join(', ')}`,
      `payload that stays on its host per rank per step (${counted ? how.replace('interface counters', 'loopback counters') : how}): ${r.rows.map((x) => `${x.title} ${three(x.intraHost)}`).join(', ')}`,
    );
  }
  for (const n of r.notes ?? []) notes.push(n);
  const dp = r.rows.find((x) => isReplicated(x.scheme));
  const clock = Math.max(0, ...r.rows.map((x) => x.split?.clockUncertaintyMs ?? 0));
  // a simulation's clock is the simulator's, with nothing arriving to estimate: the measured run's notes do not apply
  if (!r.simulated)
    notes.push(
      `exposed = wait (for the last rank to enter each collective) + transfer (from then until this rank left it), on a common clock of the ranks (offsets within ±${clock.toFixed(2)} ms; '<' marks a figure smaller than that)${c.overlap ? '; with overlap on, collectives also run while a rank computes, so wait + transfer exceed exposed' : ''}`,
      `hidden (an estimate) = time data was arriving from the previous rank while this rank computed (a collective merely pending moves no bytes and hides nothing; a frame whose arrival straddles the edge of a compute span counts pro rata${where.startsWith('compute inline') ? "; inline compute reads nothing during a unit, so what the kernel's receive queue gained meanwhile counts, at the link's pre-flight rate" : ''}); compute = step − exposed, of which fwd/bwd/opt are the passes themselves (the rest: casts, staging, the ring's work between units, copies to a compute thread)`,
    );
  if (z3 && dp && z3.time.transferMs !== null && dp.time.transferMs !== null && dp.time.transferMs > 0)
    notes.push(
      `ZeRO-3 vs DP, transfer per step: ${z3.time.transferMs.toFixed(1)} vs ${dp.time.transferMs.toFixed(1)} ms (${(z3.time.transferMs / dp.time.transferMs).toFixed(2)}x); waiting for slower ranks is not the network's cost.`,
    );
  if (z3)
    notes.push(
      `ZeRO-3 resident ${f2(z3.resident.measured)} vs peak ${f2(z3.peak.measured)} B/param: between steps a rank holds only its shards${c.persist ? ' and the persisted tensors whole' : ''}; while a unit computes it also holds that unit's gathered working-copy (${bytesPerElement(c.wireDtype) * 8}-bit) parameters.`,
    );
  notes.push(...placementNotes(r));
  const act = r.rows[0]?.activations;
  const base = dp ?? r.rows[0]; // against DP's model states where DP ran, else the first scheme's own
  if (act && act.measured > 0 && !r.device)
    notes.push(
      `activations (what the forward pass keeps for the backward pass) per rank: ${formatBytes(act.measured)} measured in every scheme, ${formatBytes(act.estimate)} by the model's count for ${c.accumulate > 1 ? `one micro-batch, batch/(N*K) = ${c.batch / (r.world * c.accumulate)}` : `batch/N = ${c.batch / r.world}`} ${rowNoun(c)}: ZeRO shards the model states, not the activations (${formatBytes(act.measured)} is ${((100 * act.measured) / Math.max(1, act.measured + base.resident.measured * base.params)).toFixed(0)}% of what ${base.title} holds in model states and activations together)`,
    );
  if (!r.simulated) notes.push(linksNote(r)); // a simulation has no links, pre-flight or late hosts of its own
  if (r.network && !r.simulated) notes.push(...networkText(r.network, r.config.linkScale), ...ringNeeds(r));
  notes.push(...holdings(r));
  return notes;
}

/** Which checkpoint each scheme continued from: the report of a resumed run covers only the steps it ran. */
function resumeNote(resume: NonNullable<RunConfig['resume']>, steps: number): string {
  const dirs = [...new Set(Object.values(resume).map((x) => x.dir))];
  const each = Object.entries(resume).map(
    ([scheme, x]) =>
      `${schemeTitle(scheme as SchemeName)} at step ${x.step}${x.from ? ` (written by ${schemeTitle(x.from.scheme)} at world ${x.from.world}, resharded as it loaded)` : ''}, steps ${x.step + 1}–${steps} run here`,
  );
  return `resumed from the checkpoints in ${dirs.join(', ')}: ${each.join('; ')}`;
}

/** Where the products ran, and what a rank held at its worst moment: in a modeled run, what the device would
 *  hold (the bands by their sizes) apart from what this process really held. */
function holdings(r: Report): string[] {
  const held = (f: (x: SchemeRow) => number) => r.rows.map((x) => `${x.title} ${formatBytes(f(x))}`).join(', ');
  if (r.device)
    return [
      `what a rank would hold on the ${r.device.title} at its worst moment (the ledger's bands by their sizes; modeled compute holds no values${r.config.offload ? "; offloaded states are the host's, not counted here" : ''}): ${held((x) => x.memory.tracked.bytes - (x.offload?.host.measured ?? 0))}`,
      ...(r.simulated
        ? []
        : [`what this process held (ArrayBuffers + WebAssembly memories: buffers, frames, the ring's pool): ${held((x) => x.memory.process)}`]),
    ];
  const products = [...new Set(Object.values(r.perRank).flatMap((sums) => sums.map((s) => s.products ?? 'not reported')))];
  return [
    `products computed on: ${products.join('; ')}${products.length > 1 ? ' (the ranks differ)' : ' (every rank)'}`,
    `everything a rank held at its worst moment (ledger: every band, model states to receive buffers, data and idle heap | process: ArrayBuffers + WebAssembly memories): ${r.rows.map((x) => `${x.title} ${formatBytes(x.memory.tracked.bytes)} | ${formatBytes(x.memory.process)}`).join(', ')}`,
  ];
}

/** What the ring needs of its slowest link: every link carries each step's payload, so the slowest sets a
 *  floor under each scheme's communication per step. */
function ringNeeds(r: Report): string[] {
  const at = r.network && ringFloorRates(r.network);
  if (!at || !r.rows.length) return [];
  const floor = (mbit: number) => r.rows.map((x) => `${x.title} ${((x.sentPerStep.frame * 8) / (mbit * 1000)).toFixed(1)}`).join(', ');
  return [
    `the ring moves at its slowest link: a step's frames take at least, ms: ${floor(at.slowest)} at the slowest link's ${at.slowest.toFixed(0)} Mbit/s (${floor(at.median)} at the median of the ${at.medianOf}, ${at.median.toFixed(0)})`,
  ];
}

/** Whether anyone on the network path could read the model (world 1 has no links). */
function linksNote(r: Report): string {
  if (r.world === 1) return 'links: none (one rank)';
  const l = r.links;
  if (l.encrypted)
    return `links: encrypted, ${l.ciphers.join('; ')}, on the coordinator connection and every ring link (TCP counts bytes into TLS; on the wire each record of up to 16 KiB adds 22 B, which the interface counters, --iface, include)`;
  if (l.ciphers.length) return `links: ${l.plainRanks} rank(s) on plain links, the rest ${l.ciphers.join('; ')}`;
  return 'links: not encrypted (ws://; --tls-cert, --tls-key and --tls-ca encrypt them, see docs/deploy.md)';
}

/** The side-by-side table (two header rows, a row per scheme) and its notes, for text and HTML alike. */
export function reportCells(r: Report): { header: string[][]; rows: string[][]; notes: string[] } {
  const hasIface = r.rows.some((x) => x.sentPerStep.iface !== null);
  const units = sizeUnits(r.rows);
  return {
    header: tableHeader(hasIface, units, r.simulated ? 'simulated' : 'measured'),
    rows: r.rows.map((x) => tableRow(x, hasIface, units, Boolean(r.simulated))),
    notes: reportNotes(r),
  };
}

/** The report as text, `width` columns at most (a terminal's): the table keeps its answer columns, the notes
 *  wrap. */
export function formatReport(r: Report, width = Infinity): string {
  const { header, rows, notes } = reportCells(r);
  const simulated = r.simulated ? ['', ...simulatedTable(r.simulated)] : [];
  const table = textTable(header, rows, { width, dropOrder: dropOrder(header[header.length - 1]) });
  return [table, '', wrapText([notes.join('\n'), ...(r.device ? ['', ...whatIfText(r)] : []), ...simulated].join('\n'), width)].join('\n');
}

/** The report table's columns in the order a narrow terminal leaves them out: the breakdowns first, the
 *  answers (memory measured, bytes sent, the step, what was exposed, the loss) last. */
const LEFT_OUT_FIRST = ['fwd/bwd/opt', 'params', 'N', 'socket', 'frame', 'iface', 'hidden', 'wait', 'transfer', 'compute', 'xDP'];
function dropOrder(names: string[]): number[] {
  const byName = LEFT_OUT_FIRST.flatMap((n) => (names.includes(n) ? [names.indexOf(n)] : []));
  // then the theory columns of memory, and the activations, before any measured figure
  const theory = names.flatMap((n, i) => (n === 'theory' && i < 7 ? [i] : []));
  return [...byName, ...theory, 7];
}
