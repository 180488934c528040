// Where a rank computes (--compute auto resolved on the rank, from its host's cores and ranks, and from how
// long its largest unit keeps a thread busy).
import type { ComputeMode, RunConfig } from '../shared/control/run-config.js';
import { gpuModel, type ModelSpec } from '../shared/models/registry.js';
import { layerWork } from '../shared/whatif/model-passes.js';

/** A CPU thread's product rate to judge a unit's length by, on the slow side (the WebAssembly kernels on one
 *  thread of this 2-core machine reach about 20 GFLOP/s, OpenBLAS 50-90): a unit is never taken for shorter
 *  than it is. */
const SLOW_THREAD_FLOPS = 10e9;

/** Seconds a unit's backward pass (the longer one) would keep a thread busy, estimated: its forward's
 *  FLOPs on this rank's rows (the what-if's count of the same model), twice over. */
export function longestUnitSeconds(spec: ModelSpec, rowsPerRank: number): number {
  const gpu = gpuModel(spec);
  const flops = spec.layers.map((_, u) => layerWork(gpu, u, rowsPerRank, 'forward').flops);
  return (2 * Math.max(0, ...flops)) / SLOW_THREAD_FLOPS;
}

/**
 * Where a rank computes. A worker thread leaves the event loop free to move ring frames and answer heartbeats
 * at any moment, at the price of copies through its staging and a hand-off per layer; it pays only where the
 * host has a spare core for it. Inline, the event loop turns between units (the kernel keeps moving bytes
 * meanwhile). So auto: a thread when there is something to overlap and at least two cores per rank's compute
 * threads on this host; also a thread, spare core or not, when a unit would keep the event loop from its
 * heartbeats for more than a quarter of the liveness limit (`unitSeconds` against `heartbeatMs`): inline, a
 * GPT of width 1024 on 4 sequences of 1024 tokens went silent for seconds a block and was taken for dead.
 */
export function resolveCompute(
  c: Pick<RunConfig, 'compute' | 'overlap' | 'gatherAhead' | 'reduceBehind'>,
  cores: number,
  busyThreadsOnHost: number,
  long: { unitSeconds: number; heartbeatMs: number } = { unitSeconds: 0, heartbeatMs: Number.POSITIVE_INFINITY },
): ComputeMode {
  if (c.compute !== 'auto') return c.compute as ComputeMode;
  const overlaps = c.overlap || c.gatherAhead > 0 || c.reduceBehind > 0;
  const silent = long.unitSeconds * 1000 > long.heartbeatMs / 4;
  return silent || (overlaps && cores >= 2 * busyThreadsOnHost) ? 'thread' : 'inline';
}
