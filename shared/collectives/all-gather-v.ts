// An all-gather whose ranks bring segments of different lengths (MPI's Allgatherv): what ZeRO-3 gathers when
// DeepSpeed's persisted parameters are left out of each rank's shard (training/schemes/persisted.ts). It runs
// as N-1 ring steps (shifts): at step k a rank passes on the segment of the rank k places behind it, so every
// segment crosses N-1 links, as in the ring all-gather, and a rank sends all segments but the next rank's. The
// steps' numbers are taken when it is called, so collectives started while it runs are numbered alike everywhere.
import type { Elems } from '../tensor/dtype.js';
import type { Collectives } from './collectives.js';
import { mod } from './chunks.js';

/** Every rank's `input` (rank r's of counts[r] values) into `output`, one after another in rank order. */
export async function allGatherV(coll: Collectives, input: Elems, output: Elems, counts: readonly number[], label: string): Promise<void> {
  const { rank: r, world: N } = coll;
  if (counts.length !== N) throw new RangeError(`all-gather-v: ${counts.length} counts for a world of ${N}`);
  if (input.length !== counts[r]) throw new RangeError(`all-gather-v: rank ${r} brings ${input.length} values, its count is ${counts[r]}`);
  const starts = counts.map((_, j) => counts.slice(0, j).reduce((a, b) => a + b, 0));
  const total = starts[N - 1] + counts[N - 1];
  if (output.length !== total) throw new RangeError(`all-gather-v: output holds ${output.length} values, the counts sum to ${total}`);
  const segment = (j: number) => output.subarray(starts[j], starts[j] + counts[j]);
  segment(r).set(input as never);
  const numbers = coll.reserve(N - 1); // before the first await
  for (let k = 0; k < N - 1; k++) await coll.shift(segment(mod(r - k, N)), segment(mod(r - k - 1, N)), `${label} ${k + 1}/${N - 1}`, numbers[k]);
}
