// Prose that fits a terminal: a line longer than the width breaks at its last space that fits. Where the line
// is a row whose last column is prose (`  key  value  what it became`), it continues under that column while
// that leaves room for a phrase; otherwise two more than the line's own indent. A word longer than the room is
// cut: no line is wider than asked. Tables are fitted by table.ts before they get here and pass untouched.

/** Least room a continued column keeps; narrower, and the text continues near the left edge instead. */
const COLUMN_ROOM = 40;

export function wrapText(text: string, width: number): string {
  if (!Number.isFinite(width)) return text;
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line, width))
    .join('\n');
}

/** Where a line's continuations begin (under its last column, or two past its indent), and whether its last
 *  column starts a line of its own (too far right to hold a phrase). */
function continuation(line: string, width: number): { indent: number; column: number } {
  const lead = line.length - line.trimStart().length;
  const gaps = [...line.slice(0, width).matchAll(/\S( {2,})(?=\S)/g)];
  const last = gaps.length ? gaps[gaps.length - 1] : null;
  const column = last ? last.index + 1 + last[1].length : -1;
  if (column > 0 && width - column >= COLUMN_ROOM) return { indent: column, column: -1 };
  return { indent: Math.min(lead + 2, Math.floor(width / 2)), column };
}

function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const { indent: at, column } = continuation(line, width);
  const indent = ' '.repeat(at);
  const out: string[] = [];
  let rest = line;
  if (column > 0) {
    out.push(line.slice(0, column).trimEnd());
    rest = indent + line.slice(column);
  }
  let start = column > 0 ? at : 0; // where the words of this line begin (its indent)
  while (rest.length > width) {
    let cut = rest.lastIndexOf(' ', width);
    if (cut <= start) cut = width; // one word longer than the room: cut it
    out.push(rest.slice(0, cut).trimEnd());
    rest = indent + rest.slice(cut).trimStart();
    start = indent.length;
  }
  if (rest.trim()) out.push(rest);
  return out;
}
