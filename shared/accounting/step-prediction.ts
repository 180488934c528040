// A step predicted from the link instead of measured on it: the scheme's schedule replayed on two clocks, the
// modeled device's compute and one queue of collectives per ring (collectives on a ring run one after
// another, like a stream), each collective costing the alpha-beta model of a ring: per step of the ring a
// latency, and its bytes (with the frames' and TCP/IP's overhead) at the link's rate. The schedule is the
// one schemes/base.ts runs: ZeRO-3's gathers ahead, DP's and ZeRO-1's buckets, ZeRO-2/3's reduce-scatters
// behind the backward pass, accumulation, the parameters' all-gather after the update. `plan` uses it, and
// holds it against a what-if run's report.
import { bytesPerElement } from '../tensor/dtype.js';
import { gradientBuckets } from '../training/buckets.js';
import type { Unit } from '../training/layout.js';
import { SCHEME_TABLE } from '../training/schemes/table.js';
import type { SchemeName } from '../control/run-config.js';
import type { GpuCost } from '../whatif/gpu-cost.js';
import { passTimes } from '../whatif/modeled-compute.js';
import { optimizerWork } from '../whatif/model-passes.js';
import type { RunPlan } from './run-plan.js';

/** A ring link: its rate each way and its latency per ring step. */
export interface Link {
  gbit: number;
  latencyUs: number;
}

export interface StepPrediction {
  stepMs: number;
  computeMs: number; // modeled: forward, backward and optimizer
  commMs: number; // the collectives' own time, summed
  exposedMs: number; // step - compute
}

/** Bytes on the link per payload byte: Ethernet, IP and TCP headers (66 B with timestamps) on each 1448-byte
 *  segment of a 1500-byte MTU. */
const TCP_OVERHEAD = 1514 / 1448;
/** A frame's envelope and WebSocket headers, bytes per chunk sent. */
const FRAME_BYTES = 48;

/** One ring's queue of collectives: each starts when it is issued and the one before it has finished. */
class RingQueue {
  private free = 0;
  busy = 0;

  constructor(
    private readonly link: Link,
    private readonly world: number,
    private readonly chunkBytes: number,
    private readonly linkScale: number,
  ) {}

  /** A reduce-scatter or all-gather (passes 1) or all-reduce (passes 2) of `padded` elements of `b` bytes,
   *  issued at `at`; returns when it ends. */
  run(at: number, padded: number, b: number, passes: 1 | 2): number {
    const N = this.world;
    if (N < 2) return at;
    const segment = Math.ceil(padded / N / this.linkScale) * b; // --link-scale K: 1/K of it on the wire
    const chunks = Math.ceil(segment / this.chunkBytes);
    const bytes = passes * (N - 1) * (segment + chunks * FRAME_BYTES) * TCP_OVERHEAD;
    const ms = passes * (N - 1) * (this.link.latencyUs / 1000) + ((bytes * 8) / (this.link.gbit * 1e9)) * 1000;
    const start = Math.max(at, this.free);
    this.free = start + ms;
    this.busy += ms;
    return this.free;
  }
}

export function predictStep(plan: RunPlan, scheme: SchemeName, cost: GpuCost, link: Link, intraHost: Link = link): StepPrediction {
  const c = plan.config;
  const f = SCHEME_TABLE[scheme];
  const layout = plan.layoutFor(scheme, 0);
  const b = bytesPerElement(c.wireDtype);
  const K = c.accumulate;
  const t = passTimes(plan.spec, cost, c.batch / (plan.world * K), c.recompute);
  const sum = (u: Unit, xs: number[]) => u.layers.reduce((s, l) => s + xs[l.index], 0);
  const hybrid = plan.shardWorld(scheme) !== plan.world;
  const ring = new RingQueue(hybrid ? intraHost : link, layout.world, c.chunkBytes, c.linkScale);
  const M = plan.world / layout.world; // the hybrid's groups: its cross ring's world
  // A group is a host's ranks: each of them is on a cross ring of its own, and all G of them leave the host
  // through its one link at once, so each cross ring has 1/G of it.
  const shared = { ...link, gbit: link.gbit / layout.world };
  const cross = hybrid ? new RingQueue(shared, M, c.chunkBytes, c.linkScale) : null;
  const owned = f.shardOptimizer ? layout.shardTotal : layout.paddedTotal;
  const optimizerMs = cost.chainMs(optimizerWork(owned, b));
  const units = layout.units;
  const trained = units.filter((u) => u.size > 0); // fine-tuning: units with nothing trainable reduce nothing
  const buckets = f.shardGradients ? [] : gradientBuckets(trained, c.bucketBytes, b);
  const closes = new Map(buckets.map((bk) => [bk[bk.length - 1], bk]));
  const window = !c.overlap ? 0 : f.shardGradients ? c.reduceBehind : Infinity;

  let now = 0;
  let compute = 0;
  const work = (ms: number) => ((now += ms), (compute += ms));
  /** ZeRO-3: this pass's gathers, started `gatherAhead` units ahead of the one computing. */
  const gathered = (order: Unit[]) => {
    const done = new Map<Unit, number>();
    // both halves of a unit (its frozen one too): one gather's bytes
    const start = (i: number) => i < order.length && !done.has(order[i]) && done.set(order[i], ring.run(now, order[i].padded + order[i].frozen.padded, b, 1));
    return (i: number) => {
      if (!f.shardParameters) return;
      start(i);
      for (let k = 1; k <= c.gatherAhead; k++) start(i + k);
      now = Math.max(now, done.get(order[i])!);
    };
  };
  for (let k = 0; k < K; k++) {
    const last = k === K - 1;
    const forward = gathered(units);
    units.forEach((u, i) => (forward(i), work(sum(u, t.forward))));
    const reversed = units.slice(layout.backwardFrom).reverse(); // no backward pass before the first trainable unit
    const backward = gathered(reversed);
    const pending: number[] = [];
    reversed.forEach((u, i) => {
      backward(i);
      work(sum(u, t.backward));
      if (f.shardGradients && u.size > 0) {
        const reduced = ring.run(now, u.padded, b, 1);
        pending.push(cross ? cross.run(reduced, Math.ceil(u.shard / M) * M, b, 2) : reduced); // the hybrid's shard, across groups
      } else if (last && closes.has(u)) {
        let end = now;
        for (const v of closes.get(u)!) end = ring.run(now, v.padded, b, f.shardOptimizer ? 1 : 2);
        pending.push(end);
      }
      while (pending.length > window) now = Math.max(now, pending.shift()!);
    });
    while (pending.length) now = Math.max(now, pending.shift()!);
  }
  work(optimizerMs);
  if (f.shardOptimizer && !f.shardParameters) for (const u of trained) now = ring.run(now, u.padded, b, 1); // the new parameters, gathered
  const commMs = ring.busy + (cross?.busy ?? 0);
  return { stepMs: now, computeMs: compute, commMs, exposedMs: now - compute };
}
