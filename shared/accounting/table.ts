// A plain text table: header rows, right-aligned cells, columns as wide as their widest cell. Given a width
// (a terminal's), the columns that matter least are left out until it fits, and a line under it names them:
// the answer stays on the screen, the rest is one --wide or the JSON away.
import { wrapText } from './wrap.js';

export interface TableFit {
  width: number; // Infinity: every column
  /** Column indices in the order they are left out (first: the first to go); unnamed columns are kept. */
  dropOrder?: readonly number[];
  /** Columns whose long cells (sentences: why a scheme never gets there, what a change edits) become a short
   *  head and a numbered note under the table when the table is too wide, before any column is left out. */
  noteColumns?: readonly number[];
}

/** A cell longer than this in a note column goes under the table. */
const NOTE_CELL = 24;

/** Long cells of the note columns as `head (n)`, their text as note n: the head is what comes before the
 *  cell's first ': ' (never: ..., as configured: ...) where that is short, else the note's number alone. */
function toNotes(rows: string[][], cols: readonly number[]): { rows: string[][]; notes: string[] } {
  const notes: string[] = [];
  const out = rows.map((r) =>
    r.map((cell, c) => {
      if (!cols.includes(c) || cell.length <= NOTE_CELL) return cell;
      const colon = cell.indexOf(': ');
      const head = colon > 0 && colon <= NOTE_CELL - 5 ? cell.slice(0, colon) : '';
      notes.push(`(${notes.length + 1}) ${head ? cell.slice(colon + 2) : cell}`);
      return `${head}${head ? ' ' : ''}(${notes.length})`;
    }),
  );
  return { rows: out, notes };
}

const GAP = 2;

/** Each column's width: its widest cell. */
const widths = (rows: string[][]): number[] =>
  Array.from({ length: Math.max(...rows.map((r) => r.length)) }, (_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
const spanOf = (w: number[]): number => w.reduce((a, b) => a + b, 0) + GAP * (w.length - 1);

export function textTable(header: string[][], given: string[][], fit: TableFit = { width: Infinity }): string {
  const tooWide = spanOf(widths([...header, ...given])) > fit.width;
  const { rows, notes } = fit.noteColumns && tooWide ? toNotes(given, fit.noteColumns) : { rows: given, notes: [] };
  const width = widths([...header, ...rows]);
  const cols = width.length;
  const total = (keep: readonly number[]) => spanOf(keep.map((c) => width[c]));
  let keep = [...width.keys()];
  const order = fit.dropOrder ?? [...width.keys()].slice(1).reverse(); // by default the rightmost go first
  const dropped: number[] = [];
  for (const c of order) {
    if (total(keep) <= fit.width) break;
    if (keep.length <= 2) break;
    keep = keep.filter((k) => k !== c);
    dropped.push(c);
  }
  // A group title (a top header cell over the columns to its right whose own top cells are empty) moves to
  // the first of its columns still shown.
  const heads = header.map((h) => [...h]);
  if (heads.length > 1)
    for (const c of dropped.filter((d) => heads[0][d])) {
      let next = c + 1;
      while (next < cols && !heads[0][next] && !keep.includes(next)) next++;
      if (next < cols && !heads[0][next]) heads[0][next] = heads[0][c];
    }
  const shown = keep.map((c) => Math.max(...[...heads, ...rows].map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) =>
    keep
      .map((c, i) => (i === 0 ? (r[c] ?? '').padEnd(shown[i]) : (r[c] ?? '').padStart(shown[i])))
      .join(' '.repeat(GAP))
      .trimEnd();
  const rule = shown.map((w) => '-'.repeat(w)).join(' '.repeat(GAP));
  const out = [...heads.map(line), rule, ...rows.map(line)];
  const names = columnNames(
    header,
    dropped.sort((a, b) => a - b),
  );
  if (dropped.length) notes.push(`(left out to fit ${fit.width} columns: ${names.join(', ')}; --wide shows them)`);
  out.push(...notes.map((n) => wrapText(n, fit.width)));
  return out.join('\n');
}

/** Each column's name from its header cells, with its group's title where the lowest cell alone repeats. */
function columnNames(header: string[][], cols: number[]): string[] {
  const low = header[header.length - 1] ?? [];
  const group = (c: number) => {
    if (header.length < 2) return '';
    for (let g = c; g >= 0; g--) if (header[0][g]) return header[0][g];
    return '';
  };
  return cols.map((c) => {
    const name = low[c] ?? String(c);
    const repeats = low.filter((x) => x === name).length > 1;
    return repeats && group(c) ? `${group(c)} ${name}` : name;
  });
}
