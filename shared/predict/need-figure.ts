// `plan --need --html`: the step against the link rate between hosts, a line per scheme that fits (log-log),
// a point where each reaches its answer, and a rule where the fastest scheme changes; with the tables the
// command prints, as one self-contained page (no script, nothing fetched), drawn like the report's figures.
import type { TopLevelSpec } from 'vega-lite';
import { escapeHtml } from '../accounting/html-escape.js';
import { STYLE, toSvg } from '../accounting/html-report.js';
import { logRates, type BestChange } from './link-need.js';

/** The page's tables are made this many columns wide at most: 12 px monospace in a 1280 px window. */
export const PAGE_COLUMNS = 140;

export interface NeedCurve {
  scheme: string;
  fits: boolean;
  predict: (gbit: number) => number; // step ms
  need: number | null; // its least rate, Gbit/s
}

export interface NeedPage {
  title: string;
  curves: NeedCurve[];
  changes: BestChange[];
  lo: number;
  hi: number;
  tables: string[]; // the command's text tables, as they print at PAGE_COLUMNS
}

/** The figure's Vega-Lite specification. */
/** The rates the x axis spans: the table's, widened to every answer (with room past the largest for its dot). */
function span(p: NeedPage, drawn: NeedCurve[]): [number, number] {
  const needs = drawn.flatMap((c) => (c.need !== null && Number.isFinite(c.need) ? [c.need] : []));
  return [Math.min(p.lo, ...needs.map((n) => n / 1.5)), Math.max(p.hi, ...needs.map((n) => n * 1.5))];
}

/** A curve that another drawn before it matches everywhere (ZeRO-2 on ZeRO-1 where the step is the same) is
 *  dashed, so that the one under it shows through. */
function repeats(c: NeedCurve, before: NeedCurve[], rates: number[]): boolean {
  return before.some((b) => rates.every((r) => Math.abs(b.predict(r) - c.predict(r)) <= 1e-3 * c.predict(r)));
}

function needSpec(p: NeedPage): TopLevelSpec {
  const drawn = p.curves.filter((c) => c.fits);
  const [lo, hi] = span(p, drawn);
  const rates = logRates(lo, hi, 60);
  const dashed = new Set(drawn.filter((c, i) => repeats(c, drawn.slice(0, i), rates)).map((c) => c.scheme));
  const line = drawn.flatMap((c) => rates.map((r) => ({ scheme: c.scheme, gbit: r, ms: c.predict(r), repeats: dashed.has(c.scheme) })));
  const points = drawn.filter((c) => c.need !== null && Number.isFinite(c.need)).map((c) => ({ scheme: c.scheme, gbit: c.need!, ms: c.predict(c.need!) }));
  const rules = p.changes.map((c) => ({ gbit: c.gbit, label: `${c.to} fastest from ${c.gbit.toPrecision(3)} Gbit/s` }));
  const x = { field: 'gbit', type: 'quantitative', scale: { type: 'log', domain: [lo, hi] }, title: 'link rate between hosts, Gbit/s' };
  const y = { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'step, ms (predicted)' };
  const color = { field: 'scheme', type: 'nominal', title: 'Scheme', sort: drawn.map((c) => c.scheme) };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 640,
    height: 360,
    config: { font: 'sans-serif', legend: { orient: 'bottom', columns: 6 } },
    usermeta: { schemes: drawn.map((c) => c.scheme) },
    layer: [
      { data: { values: line.filter((d) => !d.repeats) }, mark: { type: 'line', strokeWidth: 3 }, encoding: { x, y, color } },
      { data: { values: line.filter((d) => d.repeats) }, mark: { type: 'line', strokeWidth: 2, strokeDash: [6, 5] }, encoding: { x, y, color } },
      { data: { values: points }, mark: { type: 'point', filled: true, size: 60 }, encoding: { x, y, color } },
      { data: { values: rules }, mark: { type: 'rule', strokeDash: [4, 3], color: '#777' }, encoding: { x } },
      {
        data: { values: rules },
        mark: { type: 'text', angle: 270, align: 'right', dx: -4, dy: -4, fontSize: 10, color: '#555' },
        encoding: { x, y: { value: 4 }, text: { field: 'label' } },
      },
    ],
  } as TopLevelSpec;
}

export async function renderNeedPage(p: NeedPage): Promise<string> {
  const svg = await toSvg(needSpec(p));
  const schemes = p.curves.filter((c) => c.fits).map((c) => c.scheme);
  const caption =
    'Each line is one scheme that fits the card, its step as the predictor gives it at each link rate; a dot marks the least rate at which its exposed communication is within the asked share of the step, and a dashed rule each rate at which another scheme becomes the fastest.';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title><style>${STYLE} pre { font: 12px ui-monospace, monospace; white-space: pre-wrap; }</style></head>
<body><h1>${escapeHtml(p.title)}</h1>
${p.tables.map((t) => `<pre>${escapeHtml(t)}</pre>`).join('\n')}
<figure id="need" data-schemes="${escapeHtml(schemes.join('|'))}"><h2>Step against the link rate between hosts</h2>${svg}<figcaption>${escapeHtml(caption)}</figcaption></figure>
</body></html>
`;
}
