// The network section of the HTML report: the pre-flight's links as a heat map (sender down, receiver
// across, one stream's Mbit/s; the darker red, the further below the fastest), each ring link's achieved
// rate, and how late each host entered collectives, with the verdict. Plain HTML: a matrix of a few hosts
// needs no chart.
import type { NetworkReport } from './links.js';
import { escapeHtml } from './html-escape.js';

const esc = escapeHtml;
const rate = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** White at the fastest link, red towards zero. */
function heat(mbit: number, max: number): string {
  const f = Math.max(0, Math.min(1, mbit / Math.max(max, 1e-9)));
  const g = Math.round(120 + 135 * f);
  return `rgb(255,${g},${g})`;
}

function matrix(n: NetworkReport): string {
  const links = n.preflight?.links ?? [];
  if (!links.length) return '';
  const ranks = [...new Set(links.flatMap((l) => [l.from, l.to]))].sort((a, b) => a - b);
  const host = new Map(links.flatMap((l) => [[l.from, l.fromHost] as const, [l.to, l.toHost] as const]));
  const max = Math.max(...links.map((l) => l.mbit));
  const head = `<tr><th>from \\ to</th>${ranks.map((r) => `<th>${r}<br>${esc(host.get(r)!)}</th>`).join('')}</tr>`;
  const rows = ranks.map((from) => {
    const cells = ranks.map((to) => {
      const l = links.find((x) => x.from === from && x.to === to);
      return l
        ? `<td style="background:${heat(l.mbit, max)}" title="${l.streams} streams: ${rate(l.mbitMulti)} Mbit/s; round trip ${l.rttMs.toFixed(2)} ms">${rate(l.mbit)}</td>`
        : '<td></td>';
    });
    return `<tr><th>${from} ${esc(host.get(from)!)}</th>${cells.join('')}</tr>`;
  });
  return `<h3>Links before the run (pre-flight, ${esc(n.preflight!.mode)}, ${(n.preflight!.ms / 1000).toFixed(2)} s): Mbit/s, one stream</h3><table class="heat">${head}${rows.join('')}</table>`;
}

export function networkHtml(n: NetworkReport | undefined): string {
  if (!n) return '';
  const achieved = n.achieved.length
    ? `<h3>Ring links during the run: Mbit/s while frames arrived</h3><table class="heat"><tr>${n.achieved.map((l) => `<th>${l.from}→${l.to}</th>`).join('')}</tr><tr>${n.achieved
        .map((l) => `<td style="background:${heat(l.mbit, Math.max(...n.achieved.map((x) => x.mbit)))}">${rate(l.mbit)}</td>`)
        .join('')}</tr></table>`
    : '';
  const late =
    n.lateness.length > 1
      ? `<h3>Late into collectives, ms per step after the median rank</h3><table class="heat"><tr>${n.lateness.map((h) => `<th>${esc(h.host)}</th>`).join('')}</tr><tr>${n.lateness
          .map((h) => `<td>${h.ms.toFixed(1)}</td>`)
          .join('')}</tr></table>`
      : '';
  const verdict = n.blame.length ? `<ul class="notes">${n.blame.map((b) => `<li><b>${esc(b)}</b></li>`).join('')}</ul>` : '';
  return matrix(n) || achieved || late ? `<section class="network">${matrix(n)}${achieved}${late}${verdict}</section>` : '';
}
