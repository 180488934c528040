// Sizes and counts as the command line gives them: "80GB" (decimal), "80GiB" (binary), "13e9".

const UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** Bytes from "80GB" (decimal), "80GiB" (binary) or a plain number. Throws naming the bad text. */
export function parseBytes(text: string | number): number {
  if (typeof text === 'number') {
    if (!Number.isFinite(text) || text <= 0) throw new RangeError(`size ${text} must be a positive number of bytes`);
    return text;
  }
  const m = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? (m[2] || 'b').toLowerCase() : '';
  if (!m || !(unit in UNITS)) throw new RangeError(`cannot read "${text}" as a size: use a number with B, KB, MB, GB, TB, KiB, MiB, GiB or TiB`);
  const v = Number(m[1]) * UNITS[unit];
  if (!(v > 0)) throw new RangeError(`size "${text}" must be positive`);
  return v;
}

/** A positive count such as 13e9 or 1000000. */
export function parseCount(text: string | number, what: string): number {
  const v = typeof text === 'number' ? text : Number(text);
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${what}: "${text}" is not a positive number`);
  return v;
}
