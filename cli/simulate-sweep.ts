// `zerowire simulate --collective KIND`: one collective over the simulated network at doubling sizes, printed as
// nccl-tests prints it (size, count, time, algbw, busbw, and the algorithm NCCL's tuning model chose), so a
// public nccl-tests result for a cluster can be read against the network model the simulator runs on.
import { ConfigError } from '../shared/control/run-config.js';
import { textTable } from '../shared/accounting/table.js';
import { describeTopology, type Topology } from '../simulator/network/topology.js';
import type { NcclColl } from '../simulator/network/nccl-tuning.js';
import { doublingSizes, sweepCollective, type SweepRow } from '../simulator/collective-sweep.js';
import { parseBytes } from './sizes.js';

const KINDS: Record<string, NcclColl> = {
  'all-reduce': 'all-reduce',
  all_reduce: 'all-reduce',
  'all-gather': 'all-gather',
  all_gather: 'all-gather',
  'reduce-scatter': 'reduce-scatter',
  reduce_scatter: 'reduce-scatter',
};

export interface SweepArgs {
  collective: string;
  minBytes?: string;
  maxBytes?: string;
}

/** A size as nccl-tests' -b/-e take it (8, 64K, 8G: K, M, G binary) or as zerowire's sizes (1MiB, 2GB). */
function sweepBytes(text: string, flag: string): number {
  const m = /^\s*(\d+)\s*([KMG])\s*$/i.exec(text);
  let v: number;
  try {
    v = m ? Number(m[1]) * 1024 ** ('KMG'.indexOf(m[2].toUpperCase()) + 1) : parseBytes(text);
  } catch {
    throw new ConfigError(`${flag}: cannot read "${text}" as a size: give bytes as nccl-tests takes them (8, 64K, 8G) or with a unit (1MiB, 2GB)`);
  }
  if (!Number.isInteger(v) || v < 1) throw new ConfigError(`${flag}: "${text}" must be a whole number of bytes, at least 1`);
  return v;
}

/** The collective and sizes the flags ask for, checked. */
function sweepPlan(a: SweepArgs): { kind: NcclColl; sizes: number[] } {
  const kind = KINDS[a.collective];
  if (!kind) throw new ConfigError(`--collective: "${a.collective}" is not all-reduce, all-gather or reduce-scatter`);
  const [lo, hi] = [a.minBytes ?? '8', a.maxBytes ?? '8G'];
  const [min, max] = [sweepBytes(lo, '--min-bytes'), sweepBytes(hi, '--max-bytes')];
  if (min > max) throw new ConfigError(`--min-bytes ${lo} is above --max-bytes ${hi}`);
  return { kind, sizes: doublingSizes(min, max) };
}

/** The table, nccl-tests' columns first, and its "Avg bus bandwidth" line. */
function sweepText(kind: NcclColl, t: Topology, rows: SweepRow[]): string {
  const n = t.hosts * t.perHost;
  const body = rows.map((r) => [
    String(r.bytes),
    String(Math.floor(r.bytes / 4)),
    'float',
    r.timeUs.toFixed(1),
    r.algBwGBps.toFixed(2),
    r.busBwGBps.toFixed(2),
    r.algorithm,
    String(r.channels),
  ]);
  const table = textTable(
    [
      ['size', 'count', 'type', 'time', 'algbw', 'busbw', 'algorithm', 'channels'],
      ['(B)', '(elements)', '', '(us)', '(GB/s)', '(GB/s)', '', ''],
    ],
    body,
  );
  const avg = rows.reduce((s, r) => s + r.busBwGBps, 0) / rows.length;
  return [
    `${kind} over ${n} ranks, simulated (no byte sent): ${describeTopology(t)}`,
    "each size alone on an idle network; time = the latency NCCL's tuning model gives the chosen algorithm + the bytes at its bandwidth on the NICs and links it crosses",
    'algbw = size / time; busbw = algbw · ' + (kind === 'all-reduce' ? '2(N−1)/N' : '(N−1)/N') + " (nccl-tests' definitions, so its output reads beside this)",
    '',
    table,
    `# Avg bus bandwidth    : ${avg.toFixed(4)}`,
  ].join('\n');
}

/** Run the sweep the flags ask for on `t` and return its text. */
export async function collectiveSweep(a: SweepArgs, t: Topology): Promise<string> {
  const { kind, sizes } = sweepPlan(a);
  if (t.transport !== 'nccl') throw new ConfigError("--collective sweeps NCCL's collectives: leave --transport at nccl");
  return sweepText(kind, t, await sweepCollective(t, kind, sizes));
}
