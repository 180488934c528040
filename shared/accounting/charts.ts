// The report's figures as Vega-Lite specifications, built from one or more reports (several: a LAN run at
// each link rate, drawn side by side as columns). Every figure has one mark (a line, a bar or a stack) per
// scheme, so a reader can compare schemes on every one.
import type { TopLevelSpec } from 'vega-lite';
import { MODEL_BANDS } from '../tensor/memory-ledger.js';
import type { Report, SchemeRow } from './report.js';
import { columnUnit } from './units.js';

export interface LabelledReport {
  label: string; // '' for a single run; the link rate for a LAN run
  report: Report;
}

export interface Figure {
  id: string;
  title: string;
  caption: string;
  spec: TopLevelSpec;
}

type Datum = Record<string, string | number>;

const WIDTH = 320;
const HEIGHT = 220;
const CATEGORY = { scheme: 'Scheme' } as const;

/** A column per report when there are several; the scheme order is the run's own. */
function frame(runs: LabelledReport[], data: Datum[], body: Record<string, unknown>, schemes: string[]): TopLevelSpec {
  const several = runs.length > 1;
  const encoding = (body.encoding ?? {}) as Record<string, unknown>;
  const inner = { ...body, encoding, width: several ? 220 : WIDTH, height: HEIGHT };
  const spec = several
    ? { data: { values: data }, facet: { column: { field: 'run', type: 'nominal', title: null, sort: runs.map((r) => r.label) } }, spec: inner }
    : { data: { values: data }, ...inner };
  // Built from loosely typed parts (each figure's encoding); vega-lite checks the whole as it compiles.
  const whole: object = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: {
      font: 'sans-serif',
      // Several legends (the memory figure's bands and moments) one under the other, inside the figure's
      // width: side by side the second ran past the figure's edge and lost its last entry.
      legend: { orient: 'bottom', columns: 3, labelLimit: 260, layout: { bottom: { anchor: 'start', direction: 'vertical' } } },
      axisX: { labelAngle: 0 },
    },
    usermeta: { schemes },
    ...spec,
  };
  return whole as TopLevelSpec;
}

const schemesOf = (runs: LabelledReport[]) => [...new Set(runs.flatMap((r) => r.report.rows.map((x) => x.title)))];

/** Bars over the schemes on x (in the run's order); `encoding` gives the rest (y, colour, grouping). */
function schemeBars(runs: LabelledReport[], data: Datum[], encoding: Record<string, unknown>): TopLevelSpec {
  const schemes = schemesOf(runs);
  return frame(runs, data, { mark: 'bar', encoding: { x: { field: CATEGORY.scheme, type: 'nominal', sort: schemes, title: null }, ...encoding } }, schemes);
}

/** What the loss lines show, from the runs' own agreement: one line where the losses were identical. */
function lossCaption(runs: LabelledReport[]): string {
  const agreements = runs.flatMap(({ report }) => (report.agreement ? [report.agreement] : []));
  if (!agreements.length) return 'Mean over ranks.';
  const most = Math.max(...agreements.map((a) => a.maxLossDiff));
  return most === 0
    ? "Mean over ranks. The schemes' losses were identical at every step: their lines are one."
    : `Mean over ranks. The schemes' losses differed by ${most.toPrecision(2)} at most (the report's agreement line gives each pair's bound and why).`;
}

function lossFigure(runs: LabelledReport[]): Figure {
  const data = runs.flatMap(({ label, report }) =>
    report.rows.flatMap((row) => row.losses.map((loss, i) => ({ run: label, [CATEGORY.scheme]: row.title, step: i + 1, loss }))),
  );
  const schemes = schemesOf(runs);
  return {
    id: 'loss',
    title: 'Loss per step',
    caption: lossCaption(runs),
    spec: frame(
      runs,
      data,
      {
        mark: { type: 'line', point: true, strokeWidth: 1.5 },
        encoding: {
          x: { field: 'step', type: 'quantitative', title: 'step', axis: { tickMinStep: 1 } },
          y: { field: 'loss', type: 'quantitative', scale: { zero: false }, title: 'loss' },
          color: { field: CATEGORY.scheme, type: 'nominal', sort: schemes },
          strokeDash: { field: CATEGORY.scheme, type: 'nominal', sort: schemes },
        },
      },
      schemes,
    ),
  };
}

/** The step's parts, bottom to top, with their colours; they add up to the step. */
const TIME_PARTS: [string, string][] = [
  ['forward', '#4e79a7'],
  ['backward', '#76b7b2'],
  ['optimizer', '#59a14f'],
  ['other compute', '#a0cbe8'],
  ['exposed: wait for peers', '#f28e2b'],
  ['exposed: transfer', '#e15759'],
  ['exposed (not split)', '#bab0ac'],
];
/** Communication that ran while the rank computed: drawn over the compute parts, not on top of the step. */
const UNDER = ['comm. under compute (over it)', '#2b2b2b'] as const;

/** Step time as a stack that adds up to the step: compute by pass (and the rest of it: copies, staging), then
 *  the exposed communication, split into waiting for peers and transfer in the ratio the clock measured them
 *  (one 'exposed' part where it could not split them). With overlap, wait + transfer exceed the exposed
 *  time: the rest ran under compute, and a narrow bar over the compute parts shows how much. Only the parts
 *  some scheme has are in the legend. */
function timeFigure(runs: LabelledReport[]): Figure {
  const data: Datum[] = [];
  for (const { label, report } of runs)
    for (const row of report.rows) {
      const t = row.time;
      const split = t.waitMs !== null && t.transferMs !== null;
      const comm = split ? t.waitMs! + t.transferMs! : 0;
      const waitShare = comm > 0 ? t.waitMs! / comm : 0;
      const other = t.computeMs - t.forwardMs - t.backwardMs - t.optimizerMs;
      const stack = [
        t.forwardMs,
        t.backwardMs,
        t.optimizerMs,
        other,
        split ? t.exposedMs * waitShare : 0,
        split ? t.exposedMs * (1 - waitShare) : 0,
        split ? 0 : t.exposedMs,
      ];
      stack.forEach((ms, i) => ms > 0 && data.push({ run: label, [CATEGORY.scheme]: row.title, part: TIME_PARTS[i][0], order: i, ms }));
      if (split && comm > t.exposedMs)
        data.push({ run: label, [CATEGORY.scheme]: row.title, part: UNDER[0], order: TIME_PARTS.length, ms: comm - t.exposedMs });
    }
  const present = [...TIME_PARTS, UNDER].filter(([part]) => data.some((d) => d.part === part && (d.ms as number) > 0));
  const schemes = schemesOf(runs);
  const x = { field: CATEGORY.scheme, type: 'nominal', sort: schemes, title: null };
  const color = { field: 'part', type: 'nominal', title: null, scale: { domain: present.map((p) => p[0]), range: present.map((p) => p[1]) } };
  return {
    id: 'time',
    title: 'Step time: compute and communication (ms per step)',
    caption:
      'Mean per step over ranks, first step excluded; each stack adds up to the step. Exposed communication is the step less compute, split into waiting for the last rank to enter a collective and transfer from then on, in the ratio measured. The narrow dark bar is communication that ran while the rank computed: it overlaps the compute parts, so it is drawn over them.',
    spec: frame(
      runs,
      data,
      {
        encoding: { x, color },
        layer: [
          {
            transform: [{ filter: { field: 'part', oneOf: TIME_PARTS.map((p) => p[0]) } }],
            mark: 'bar',
            encoding: { y: { field: 'ms', type: 'quantitative', stack: 'zero', title: 'ms per step' }, order: { field: 'order', type: 'quantitative' } },
          },
          {
            transform: [{ filter: { field: 'part', equal: UNDER[0] } }],
            mark: { type: 'bar', width: { band: 0.3 }, opacity: 0.8 },
            encoding: { y: { field: 'ms', type: 'quantitative', stack: null, title: 'ms per step' } },
          },
        ],
      },
      schemes,
    ),
  };
}

function trafficFigure(runs: LabelledReport[]): Figure {
  const measures = ['theory', 'payload', 'frame', 'socket', 'interface'];
  const data: Datum[] = [];
  const sent = (row: SchemeRow) => [row.sentPerStep.theory, row.sentPerStep.payload, row.sentPerStep.frame, row.sentPerStep.socket, row.sentPerStep.iface];
  const unit = columnUnit(runs.flatMap(({ report }) => report.rows.flatMap((row) => sent(row).map((b) => b ?? 0))));
  for (const { label, report } of runs)
    for (const row of report.rows)
      sent(row).forEach((bytes, i) => {
        if (bytes !== null) data.push({ run: label, [CATEGORY.scheme]: row.title, measure: measures[i], [unit.name]: bytes / unit.scale });
      });
  return {
    id: 'traffic',
    title: `Bytes sent per rank per step (${unit.name})`,
    caption:
      'Theory: 2(N-1)/N of the parameters for DP and ZeRO-1/2, 3(N-1)/N for ZeRO-3. Payload is tensor data, frame adds msgpack and WebSocket framing, socket is what the process handed its sockets (every message, pings and handshakes: not what TCP sent, whose headers and retransmissions it cannot see), interface what the kernel counted.',
    spec: schemeBars(runs, data, {
      xOffset: { field: 'measure', type: 'nominal', sort: measures },
      y: { field: unit.name, type: 'quantitative', title: `${unit.name} per rank per step` },
      color: { field: 'measure', type: 'nominal', sort: measures, title: null },
    }),
  };
}

/** Bytes per parameter per band: the theory's bands, then what the ledger measured, at rest and at the peak. */
function memoryFigure(runs: LabelledReport[]): Figure {
  const bands = [...MODEL_BANDS, 'gathered', 'bucket'];
  const moments = ['resident, theory', 'resident, measured', 'peak, theory', 'peak, measured'];
  const data: Datum[] = [];
  for (const { label, report } of runs)
    for (const row of report.rows) {
      const sums = report.perRank[row.scheme] ?? [];
      const maxOver = (f: (i: number) => number) => Math.max(0, ...sums.map((_, i) => f(i)));
      for (const band of bands) {
        const theory = row.memory.theoryBands[band] ?? 0;
        const values = [
          band === 'gathered' || band === 'bucket' ? 0 : theory,
          maxOver((i) => sums[i].memory.resident[band] ?? 0),
          theory,
          maxOver((i) => sums[i].memory.peakBands[band] ?? 0),
        ];
        values.forEach((bytes, k) => {
          if (bytes > 0) data.push({ run: label, [CATEGORY.scheme]: row.title, moment: moments[k], band, perParam: bytes / row.params });
        });
      }
    }
  return {
    id: 'memory',
    title: 'Model states per rank (bytes per parameter), by band',
    caption:
      'Between steps (resident) and at the worst moment of a step (peak), theory next to what the ledger measured on the rank that held most. The transient bands are a ZeRO-3 gathered unit and a ZeRO-2/3 gradient bucket.',
    spec: schemeBars(runs, data, {
      xOffset: { field: 'moment', type: 'nominal', sort: moments },
      y: { field: 'perParam', type: 'quantitative', stack: 'zero', title: 'bytes per parameter' },
      color: { field: 'band', type: 'nominal', sort: bands, title: null },
      opacity: { field: 'moment', type: 'nominal', sort: moments, scale: { range: [0.45, 1, 0.45, 1] }, title: null },
      tooltip: [{ field: CATEGORY.scheme }, { field: 'moment' }, { field: 'band' }, { field: 'perParam', format: '.2f' }],
    }),
  };
}

/** Everything the rank held at its worst moment, band by band as the ledger tracked it, next to what the
 *  process itself reported. */
function fullMemoryFigure(runs: LabelledReport[]): Figure {
  const groups: [string, string[]][] = [
    ['model states + transients', [...MODEL_BANDS, 'gathered', 'bucket']],
    ['compute scratch', ['compute']],
    ['collective staging', ['comm']],
    ['receive buffers', ['receive']],
    ['training data', ['data']],
    ['heap, idle', ['heap idle']],
  ];
  const parts = [...groups.map(([name]) => name), 'process: ArrayBuffers + wasm'];
  const data: Datum[] = [];
  const rows = runs.flatMap(({ report }) => report.rows);
  const unit = columnUnit(rows.flatMap((row) => [row.memory.tracked.bytes, row.memory.process]));
  for (const { label, report } of runs)
    for (const row of report.rows) {
      const bands = row.memory.tracked.bands;
      for (const [name, members] of groups)
        data.push({
          run: label,
          [CATEGORY.scheme]: row.title,
          part: name,
          kind: 'ledger',
          [unit.name]: members.reduce((t, b) => t + (bands[b] ?? 0), 0) / unit.scale,
        });
      data.push({ run: label, [CATEGORY.scheme]: row.title, part: parts[parts.length - 1], kind: 'process', [unit.name]: row.memory.process / unit.scale });
    }
  return {
    id: 'memory-full',
    title: `Everything a rank holds at its worst moment (${unit.name})`,
    caption:
      'Left bar of each pair: the ledger at its peak, by band. Right bar: what the process reported at its peak (ArrayBuffers plus WebAssembly memories, including what earlier schemes of the run still hold). ZeRO shards the model states only.',
    spec: schemeBars(runs, data, {
      xOffset: { field: 'kind', type: 'nominal', sort: ['ledger', 'process'] },
      y: { field: unit.name, type: 'quantitative', stack: 'zero', title: `${unit.name} per rank` },
      color: { field: 'part', type: 'nominal', sort: parts, title: null },
    }),
  };
}

export function figures(runs: LabelledReport[]): Figure[] {
  return [timeFigure(runs), trafficFigure(runs), memoryFigure(runs), fullMemoryFigure(runs), lossFigure(runs)];
}
