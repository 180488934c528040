// Parsing and printing sizes: "80GB", "512MiB", "13e9".

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

const BINARY = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** The binary unit that holds `bytes` in fewer than 1024 of it (bytes below 1 KiB stay bytes). */
function unitOf(bytes: number): number {
  let i = 0;
  while (i < BINARY.length - 1 && Math.abs(bytes) >= 1024 ** (i + 1)) i++;
  return i;
}

/** A size in the unit that fits it, three significant figures: "512 B", "1.00 KiB", "16.9 MiB", "104 GiB". */
export function formatBytes(b: number): string {
  const i = unitOf(b);
  if (i === 0) return `${b.toFixed(0)} B`;
  const x = b / 1024 ** i;
  return `${x.toFixed(Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2)} ${BINARY[i]}`;
}

/** One unit for a column of sizes, from its largest: so that the header can name it and the largest figure
 *  reads below 10,000 of it (KiB at the least, as the report's columns always were). */
export function columnUnit(values: readonly number[]): { name: string; scale: number; cell: (b: number) => string } {
  const largest = Math.max(0, ...values.map(Math.abs));
  let i = 1;
  while (i < BINARY.length - 1 && largest / 1024 ** i >= 10_000) i++;
  const scale = 1024 ** i;
  return { name: BINARY[i], scale, cell: (b) => (b / scale).toFixed(1) };
}
