// The report as one self-contained HTML file: the side-by-side table, its notes and the figures, drawn with
// Vega-Lite and rendered to inline SVG here, at report time. The file has no script and fetches nothing,
// so it opens anywhere, offline, and can be attached to a ticket or a mail.
import { networkHtml } from './links-html.js';
import { escapeHtml } from './html-escape.js';
import * as vega from 'vega';
import { compile } from 'vega-lite';
import { figures, type LabelledReport } from './charts.js';
import { reportCells } from './report-text.js';
import { whatIfCells } from './whatif-text.js';

const escape = escapeHtml;

/** A Vega-Lite figure as inline SVG. */
export async function toSvg(spec: Parameters<typeof compile>[0]): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** One figure alone, as an SVG document (for docs and READMEs). */
export async function renderFigureSvg(runs: LabelledReport[], id: string): Promise<string> {
  const f = figures(runs).find((x) => x.id === id);
  if (!f) throw new Error(`no figure "${id}"`);
  return toSvg({ ...f.spec, title: f.title } as Parameters<typeof compile>[0]);
}

function table(header: string[][], rows: string[][]): string {
  const th = header.map((r) => `<tr>${r.map((c, i) => `<th class="${i ? 'num' : ''}">${escape(c)}</th>`).join('')}</tr>`).join('');
  const td = rows.map((r) => `<tr>${r.map((c, i) => `<td class="${i ? 'num' : ''}">${escape(c)}</td>`).join('')}</tr>`).join('');
  return `<div class="wide"><table><thead>${th}</thead><tbody>${td}</tbody></table></div>`; // scrolls rather than cut off
}

export const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1280px; padding: 0 16px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; font: 11px ui-monospace, monospace; margin: 8px 0; }
th, td { padding: 2px 4px; border-bottom: 1px solid #e4e4e4; }
.wide { overflow-x: auto; } th { background: #f6f6f6; } .num { text-align: right; }
ul.notes { font-size: 13px; color: #444; } figure { margin: 16px 0 28px; max-width: 600px; } figcaption { font-size: 13px; color: #555; max-width: 900px; }
.grid { display: flex; flex-wrap: wrap; gap: 8px 32px; }
table.heat td { min-width: 56px; text-align: right; }`;

/** One page for one run, or for several runs side by side (a LAN run at each link rate: `label` names each). */
export async function renderHtmlReport(runs: LabelledReport[], title: string): Promise<string> {
  if (runs.length === 0) throw new Error('renderHtmlReport: no report to render');
  const sections: string[] = [];
  for (const { label, report } of runs) {
    const { header, rows, notes } = reportCells(report);
    const list = (xs: string[]) => `<ul class="notes">${xs.map((n) => `<li>${escape(n)}</li>`).join('')}</ul>`;
    const w = whatIfCells(report); // the modeled device's table, every modeled figure said to be modeled
    const whatIf = w ? `<h3>What-if: compute modeled</h3>${list(w.before)}${table(w.header, w.rows)}${list(w.after)}` : '';
    sections.push(
      `<section class="run">${label ? `<h2>${escape(label)}</h2>` : ''}${table(header, rows)}${list(notes)}${whatIf}</section>${networkHtml(report.network)}`,
    );
  }
  const figs: string[] = [];
  for (const f of figures(runs)) {
    const schemes = (f.spec.usermeta as { schemes: string[] }).schemes;
    figs.push(
      `<figure id="${f.id}" data-schemes="${escape(schemes.join('|'))}"><h2>${escape(f.title)}</h2>${await toSvg(f.spec)}<figcaption>${escape(f.caption)}</figcaption></figure>`,
    );
  }
  const created = runs[0].report.createdAt;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title><style>${STYLE}</style></head>
<body><h1>${escape(title)}</h1><p>zerowire report, ${escape(created)}. Every figure below is drawn from the same numbers as the table.</p>
${sections.join('\n')}
<div class="grid">${figs.join('\n')}</div>
</body></html>
`;
}
