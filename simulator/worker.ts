// The simulation on a worker thread of its own, so that it gets a young generation sized for it: a thousand
// simulated ranks make millions of short-lived objects (records, extents, promises), and V8's default young
// generation spends a third of the run scavenging them (a 1,024-rank ZeRO++ run: 39 s, 29 s with 64 MB
// semi-spaces). V8 takes that size only when a heap is made, which a worker's resourceLimits can do.
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { ConfigError, type RunConfig } from '../shared/control/run-config.js';
import type { Topology } from './network/topology.js';
import { simulate } from './simulate.js';

interface Job {
  config: RunConfig;
  topology: Topology;
  logLevel: string;
}

const job = workerData as Job;
// its lines go to the command's own logger (simulateOnWorker), which prints them as every command does
const log = pino({ level: job.logLevel }, { write: (line: string) => parentPort!.postMessage({ log: line }) });
simulate(job.config, job.topology, log).then(
  (sim) => parentPort!.postMessage({ ok: true, sim: { ...sim, summaries: [...sim.summaries] } }),
  (err: Error) => parentPort!.postMessage({ ok: false, message: err.message, config: err instanceof ConfigError }),
);
