// One collective over every rank of the simulated network, alone, at sizes doubling from one bound to the
// other: what nccl-tests' *_perf binaries print (size, time, algbw, busbw), from the same network model a
// simulated run's collectives take, so a public nccl-tests result can be set beside the model directly.
import { withClock } from '../shared/time/clock.js';
import { VirtualClock } from './virtual-clock.js';
import { Network } from './network/network.js';
import type { NcclColl } from './network/nccl-tuning.js';
import type { Topology } from './network/topology.js';

export interface SweepRow {
  bytes: number; // nccl-tests' size: the whole buffer (an all-gather's output, a reduce-scatter's input)
  timeUs: number;
  algBwGBps: number; // bytes / time
  busBwGBps: number; // algbw · 2(N−1)/N (all-reduce) or · (N−1)/N (the others), as nccl-tests defines it
  algorithm: string;
  channels: number;
}

/** nccl-tests' bus-bandwidth factor for a collective over `n` ranks. */
export const busFactor = (kind: NcclColl, n: number) => (kind === 'all-reduce' ? (2 * (n - 1)) / n : (n - 1) / n);

/** `kind` over all the topology's ranks at each of `sizes` bytes, each alone on an idle network. */
export async function sweepCollective(t: Topology, kind: NcclColl, sizes: readonly number[]): Promise<SweepRow[]> {
  const n = t.hosts * t.perHost;
  const members = Array.from({ length: n }, (_, r) => r);
  const steps = kind === 'all-reduce' ? 2 * (n - 1) : n - 1;
  const rows: SweepRow[] = [];
  for (const bytes of sizes) {
    const network = new Network(t);
    const clock = new VirtualClock();
    const call = { kind, segmentBytes: bytes / n, steps };
    await withClock(clock, () => clock.drive(network.run(members, call), () => `${kind} of ${bytes} bytes`));
    const timeUs = clock.now() * 1000;
    const [choice] = network.choiceRows();
    const algBwGBps = bytes / timeUs / 1000;
    rows.push({ bytes, timeUs, algBwGBps, busBwGBps: algBwGBps * busFactor(kind, n), algorithm: choice.algorithm, channels: choice.channels });
  }
  return rows;
}

/** Sizes from `min` to `max` bytes, doubling (nccl-tests' -b, -e, -f 2). */
export function doublingSizes(min: number, max: number): number[] {
  const out: number[] = [];
  for (let s = min; s <= max; s *= 2) out.push(s);
  return out;
}
