// Printing sizes in the unit that fits them (reading them from the command line is cli/sizes.ts).

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
