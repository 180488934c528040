// `zerowire simulate`: the run as its ranks would train it, every rank in this one process on a virtual clock.
// Each rank runs the schemes' own code (rank/scheme-run.ts: the same buckets, overlap, prefetch, sub-rings and
// accumulation as a rank on a LAN), computes on the what-if device model, and its collectives meet their
// group's at a rendezvous and take the network model's time. The report is a run's report, marked simulated.
import { getHeapStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { buildReport, type RankRecord, type Report } from '../shared/accounting/report.js';
import type { CollectiveBrief, SchemeSummary, StepMetrics } from '../shared/control/messages.js';
import { ConfigError, type ComputeMode, type RunConfig, type SchemeName } from '../shared/control/run-config.js';
import { withClock } from '../shared/time/clock.js';
import { resolveHybrid } from '../shared/training/schemes/world-fit.js';
import { implementationFor } from '../rank/implementation.js';
import { runScheme } from '../rank/scheme-run.js';
import { Network } from './network/network.js';
import { describeTopology, hostOf, topologyRefusal, type Topology } from './network/topology.js';
import { SimRings } from './rings.js';
import { VirtualClock } from './virtual-clock.js';

export interface Simulation {
  report: Report;
  summaries: Map<SchemeName, SchemeSummary[]>;
  ranks: RankRecord[];
}

/** Worlds up to this many ranks keep every rank's collectives; above, the first host's ranks keep theirs and
 *  the others one entry per ring (their bytes, for the report's split by host): a thousand ranks' lists of
 *  thousands of collectives would be most of the simulation's memory. */
const DETAILED = 256;

function condense(m: StepMetrics): void {
  const by = new Map<string, CollectiveBrief>();
  for (const c of m.collectives) {
    const key = c.ring ?? 'main';
    const x = by.get(key);
    if (!x) by.set(key, { ...c, kind: 'condensed', label: 'every collective on this ring', elements: 0, padded: 0 });
    else Object.assign(x, { payload: x.payload + c.payload, frame: x.frame + c.frame, entry: Math.min(x.entry, c.entry), exit: Math.max(x.exit, c.exit) });
  }
  m.collectives = [...by.values()];
}

/** The run as the coordinator would seat it on these hosts: the shard group from the hosts, or the schemes that
 *  cannot form groups left out. */
function seated(config: RunConfig, topology: Topology, world: number): ReturnType<typeof resolveHybrid> {
  const refused = topologyRefusal(topology, world);
  if (refused) throw new ConfigError(refused);
  try {
    return resolveHybrid(
      config,
      Array.from({ length: world }, (_, r) => `host${hostOf(topology, r)}`),
    );
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

export async function simulate(config: RunConfig, topology: Topology, log: Logger): Promise<Simulation> {
  const world = topology.hosts * topology.perHost;
  const resolved = seated(config, topology, world);
  config = resolved.config;
  const plan = new RunPlan(config, world);
  if (!plan.modeled) throw new ConfigError('simulate models the compute: give --compute model:PRESET or --device FILE');
  const started = performance.now();
  const network = new Network(topology);
  const rings = new SimRings(network, { chunkBytes: config.chunkBytes, timeoutMs: config.timeoutMs, linkScale: config.linkScale });
  const ranks = rings.ranks(config, world);
  const impl = implementationFor(config.compute as ComputeMode, true);
  const clock = new VirtualClock();
  const quiet = log.child({ simulated: true }, { level: 'warn' });
  const summaries = new Map<SchemeName, SchemeSummary[]>();
  let heap = 0;
  const sampler = setInterval(() => (heap = Math.max(heap, getHeapStatistics().used_heap_size)), 200);
  try {
    await withClock(clock, async () => {
      for (const scheme of config.schemes) {
        const runs = ranks.map(async ({ rank, coll, hybrid }) => {
          const compute = impl.compute(plan.spec, 1, config);
          try {
            return await runScheme({
              ...{ scheme, plan, coll, data: impl.data(plan.spec, config), compute, impl, log: quiet, computeMode: config.compute as ComputeMode },
              ...(hybrid ? { hybrid } : {}),
              clock: () => ({ offsetMs: 0, uncertaintyMs: 0 }), // one clock for every rank
              resyncClock: () => Promise.resolve(),
              straggleMs: 0,
              collect: false,
              loopLag: false, // one event loop for every rank, on a virtual clock: nothing of a rank's to time
              onStep: (m) => (world > DETAILED && hostOf(topology, rank) > 0 ? condense(m) : undefined),
              onCheckpoint: () => undefined,
            });
          } finally {
            await compute.close();
          }
        });
        summaries.set(scheme, await clock.drive(Promise.all(runs), () => rings.waiting()));
        log.info({ scheme, ranks: world, virtualMs: clock.now().toFixed(1) }, `simulated ${scheme}`);
      }
    });
  } finally {
    clearInterval(sampler);
  }
  heap = Math.max(heap, getHeapStatistics().used_heap_size);
  const records: RankRecord[] = ranks.map(({ rank }) => {
    const host = `host${hostOf(topology, rank)}`;
    return { rank, address: 'simulated', peerPort: 0, host, hostname: host, pid: 0 };
  });
  const report = buildReport(plan, records, summaries, resolved.notes, null);
  report.simulated = simulationNote(topology, network, clock, performance.now() - started, heap);
  return { report, summaries, ranks: records };
}

/** What the report says of the simulation itself: the network, NCCL's choices, and what it cost to run. */
function simulationNote(topology: Topology, network: Network, clock: VirtualClock, wallMs: number, heap: number): NonNullable<Report['simulated']> {
  return {
    network: describeTopology(topology),
    choices: network.choiceRows(),
    wallMs,
    events: clock.events,
    heapMB: heap / 1e6,
    rssMB: (process.resourceUsage().maxRSS * 1024) / 1e6,
  };
}

type FromWorker =
  | { log: string }
  | { ok: true; sim: Omit<Simulation, 'summaries'> & { summaries: [SchemeName, SchemeSummary[]][] } }
  | { ok: false; message: string; config: boolean };

/** simulate() on a worker thread with a young generation sized for thousands of ranks (worker.ts); its log
 *  lines through `log`. */
export function simulateOnWorker(config: RunConfig, topology: Topology, log: Logger): Promise<Simulation> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: { config, topology, logLevel: log.level },
      resourceLimits: { maxYoungGenerationSizeMb: 192 },
    });
    w.on('message', (m: FromWorker) => {
      if ('log' in m) {
        const { level, msg, time: _t, pid: _p, hostname: _h, ...rest } = JSON.parse(m.log) as { level: number; msg: string } & Record<string, unknown>;
        return void log[level >= 50 ? 'error' : level >= 40 ? 'warn' : level >= 30 ? 'info' : 'debug'](rest, msg);
      }
      if (m.ok) resolve({ ...m.sim, summaries: new Map(m.sim.summaries) });
      else reject(m.config ? new ConfigError(m.message) : new Error(m.message));
      void w.terminate();
    });
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`the simulation's thread ended (exit ${code}) before its result`))); // no-op once settled
  });
}
