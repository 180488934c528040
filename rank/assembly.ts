// A rank's run, built once from the coordinator's `assign`: the plan, the rings (the hybrid's too), the
// pre-flight, the collectives, where and on how many threads it computes, and its data. The one place that
// chooses the real or the what-if implementation (implementation.ts).
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { fitCheck } from '../shared/accounting/fit.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import type { Collectives } from '../shared/collectives/collectives.js';
import type { ControlMessage } from '../shared/control/messages.js';
import type { ComputeMode } from '../shared/control/run-config.js';
import { checkWritableDir } from '../shared/io/writable.js';
import type { TrainingData } from '../shared/training/data.js';
import type { LinkProbe } from '../shared/transport/link-probe.js';
import type { LivenessTiming } from '../shared/transport/liveness.js';
import { wireRing, type PeerListener, type Ring } from '../shared/transport/ring.js';
import { longestUnitSeconds, resolveCompute } from './compute-choice.js';
import { wireHybridRings, type HybridRings } from './hybrid-rings.js';
import { implementationFor, type Implementation } from './implementation.js';
import { logKernels } from './kernels-log.js';
import { preflight } from './preflight.js';

export interface AssembledRun {
  rank: number;
  plan: RunPlan; // the run, resolved once
  ring: Ring;
  hybrid: HybridRings | null; // hsdp's sub-rings
  coll: Collectives; // over `ring`
  impl: Implementation;
  data: TrainingData;
  threads: number; // computing this rank's products (--threads, resolved)
  computeMode: ComputeMode; // --compute, resolved
  links: LinkProbe[]; // what the pre-flight measured
  preflightMs: number;
}

/** Everything the rank trains with. Throws (with the reason) where the run cannot go on this rank. */
export async function assembleRun(
  msg: Extract<ControlMessage, { type: 'assign' }>,
  listener: PeerListener,
  own: { maxRankMemory?: number; liveness: LivenessTiming; quiet: () => Promise<void> },
  log: Logger,
): Promise<AssembledRun> {
  const c = msg.config;
  const plan = new RunPlan(c, msg.world);
  if (own.maxRankMemory !== undefined) {
    const fit = fitCheck(plan, own.maxRankMemory);
    if (fit.refused.length) throw new Error(fit.message);
  }
  // This rank writes its checkpoint shards there (a shared file system across machines): check now.
  if (c.checkpoint) await checkWritableDir(c.checkpoint.dir, '--checkpoint-dir');
  log.info({ rank: msg.rank, world: msg.world, prev: `${msg.prevHost}:${msg.prevPort}` }, 'assigned; wiring the ring');
  const threads = c.threads === 'auto' ? Math.max(1, Math.floor(availableParallelism() / msg.hostRanks)) : c.threads;
  const unitSeconds = longestUnitSeconds(plan.spec, c.batch / (msg.world * c.accumulate));
  const computeMode = resolveCompute(c, availableParallelism(), msg.hostRanks * threads, { unitSeconds, heartbeatMs: own.liveness.timeoutMs });
  logKernels(log, threads, computeMode);
  const impl = implementationFor(computeMode, plan.modeled);
  const data = impl.data(plan.spec, c);
  // The initial weights take seconds at 10^7 parameters on a busy host: made now, while nobody counts
  // this rank's silence (the run has not started, the ring is not wired), not inside the first step.
  plan.theta0();
  const ring = await wireRing({
    rank: msg.rank,
    world: msg.world,
    runId: msg.runId,
    ringKey: msg.ringKey,
    listener,
    prev: { host: msg.prevHost, port: msg.prevPort },
    timeoutMs: c.timeoutMs,
    chunkBytes: c.chunkBytes,
    keepOpen: true,
  });
  const limits = { chunkBytes: c.chunkBytes, timeoutMs: c.timeoutMs, linkScale: c.linkScale };
  const hybrid = await wireHybridRings(msg, listener, limits, impl.collectives);
  const { links, ms } = await preflight(msg, listener, log, own.quiet); // before the seal: its connections come through the listener
  listener.seal();
  for (const r of [ring, ...(hybrid?.rings ?? [])]) for (const link of [r.next, r.prev]) link?.keepalive(own.liveness);
  // The pace of the ring's link into this rank (the better of one stream and several, as the report reads it).
  const inbound = links.find((l) => l.to === msg.rank && l.from === ring.prev?.peerRank);
  if (ring.prev && inbound) ring.prev.arrivalMbit = Math.max(inbound.mbit, inbound.mbitMulti);
  const coll = impl.collectives(ring, limits);
  return { rank: msg.rank, plan, ring, hybrid, coll, impl, data, threads, computeMode, links, preflightMs: ms };
}
