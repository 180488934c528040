// A plain text table: header rows, right-aligned cells, columns as wide as their widest cell.

export function textTable(header: string[][], rows: string[][]): string {
  const all = [...header, ...rows];
  const cols = Math.max(...all.map((r) => r.length));
  const width = Array.from({ length: cols }, (_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => (c === 0 ? cell.padEnd(width[c]) : cell.padStart(width[c])))
      .join('  ')
      .trimEnd();
  const rule = width.map((w) => '-'.repeat(w)).join('  ');
  return [...header.map(line), rule, ...rows.map(line)].join('\n');
}
