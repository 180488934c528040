// Where a rank computes (--compute auto resolved on the rank, from its host's cores and ranks).
import type { ComputeMode, RunConfig } from '../shared/control/run-config.js';

/**
 * Where a rank computes. A worker thread leaves the event loop free to move ring frames at any moment, at
 * the price of copies through its staging and a hand-off per layer; it pays only where the host has a spare
 * core for it. Inline, the event loop turns between units (the kernel keeps moving bytes meanwhile). So
 * auto: a thread when there is something to overlap and at least two cores per rank's compute threads on
 * this host, else inline.
 */
export function resolveCompute(
  c: Pick<RunConfig, 'compute' | 'overlap' | 'gatherAhead' | 'reduceBehind'>,
  cores: number,
  busyThreadsOnHost: number,
): ComputeMode {
  if (c.compute !== 'auto') return c.compute as ComputeMode;
  const overlaps = c.overlap || c.gatherAhead > 0 || c.reduceBehind > 0;
  return overlaps && cores >= 2 * busyThreadsOnHost ? 'thread' : 'inline';
}
