// How wide printed text may be. On a terminal, its width (a terminal that reports none: COLUMNS, else 80);
// anywhere else (a file, a pipe, another program reading the output) no limit: whole lines, as grep and the
// tests read them. --wide lifts the limit on a terminal too.

export function screenWidth(wide = false, out: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (wide || !out.isTTY) return Infinity;
  if (out.columns && out.columns > 0) return out.columns;
  const env = Number(process.env.COLUMNS);
  return Number.isInteger(env) && env > 0 ? env : 80;
}
