// A step predicted from the link instead of measured on it: the scheme's schedule replayed on two clocks, the
// modeled device's compute and one queue of collectives per ring (collectives on a ring run one after
// another, like a stream), each collective costing the alpha-beta model of a ring: per step of the ring a
// latency, and its bytes (with the frames' and TCP/IP's overhead) at the link's rate. The schedule is the
// one schemes/base.ts runs: ZeRO-3's gathers ahead, DP's and ZeRO-1's buckets, ZeRO-2/3's reduce-scatters
// behind the backward pass, accumulation, the parameters' all-gather after the update. `plan` uses it, and
// holds it against a what-if run's report.
import { bytesPerElement } from '../tensor/dtype.js';
import { gradientBuckets } from '../training/buckets.js';
import type { ShardLayout, Unit } from '../training/layout.js';
import { OffloadQueue } from './offload-prediction.js';
import { runDevice } from '../whatif/preset.js';
import { SCHEME_TABLE } from '../training/schemes/table.js';
import type { SchemeName } from '../control/run-config.js';
import type { GpuCost } from '../whatif/gpu-cost.js';
import { passTimes } from '../whatif/modeled-compute.js';
import { optimizerWork } from '../whatif/model-passes.js';
import type { RunPlan } from '../accounting/run-plan.js';
import { zeroPPQueues } from './zeropp-prediction.js';
import { RingQueue, type Link } from './ring-queue.js';

export type { Link } from './ring-queue.js';

export interface StepPrediction {
  stepMs: number;
  computeMs: number; // modeled: forward, backward and optimizer
  commMs: number; // the collectives' own time, summed
  exposedMs: number; // step - compute
  offload?: { pcieMs: number; hostAdamMs: number }; // --offload: the host link's busy time and the host's Adam
}

/** The scheme's ring (the hybrid's: its group's, inside a host) and the hybrid's cross ring over its M groups. */
function rings(plan: RunPlan, scheme: SchemeName, G: number, link: Link, intraHost: Link): { ring: RingQueue; cross: RingQueue | null; M: number } {
  const c = plan.config;
  const hybrid = plan.shardWorld(scheme) !== plan.world;
  const M = plan.world / G;
  // A group is a host's ranks, each on a cross ring of its own, all leaving through its one link: 1/G each.
  const cross = hybrid ? new RingQueue({ ...link, gbit: link.gbit / G }, M, c.chunkBytes, c.linkScale) : null;
  return { ring: new RingQueue(hybrid ? intraHost : link, G, c.chunkBytes, c.linkScale), cross, M };
}

/** A tied head's unit and the embeddings' unit gathered again for it (schemes/tied.ts), where they differ. */
function tiedLender(layout: ShardLayout): { to: Unit; unit: Unit } | null {
  const t = layout.sizes().tied;
  return t && t.lender !== t.borrower ? { to: layout.units[t.borrower], unit: layout.units[t.lender] } : null;
}

export function predictStep(plan: RunPlan, scheme: SchemeName, cost: GpuCost, link: Link, intraHost: Link = link): StepPrediction {
  const c = plan.config;
  const [f, layout, b, K] = [SCHEME_TABLE[scheme], plan.layoutFor(scheme, 0), bytesPerElement(c.wireDtype), c.accumulate];
  const t = passTimes(plan.gpu, cost, c.batch / (plan.world * K), c.recompute);
  const sum = (u: Unit, xs: number[]) => u.layers.reduce((s, l) => s + xs[l.index], 0);
  const { ring, cross, M } = rings(plan, scheme, layout.world, link, intraHost);
  const optimizerMs = cost.chainMs(optimizerWork(f.shardOptimizer ? layout.shardTotal : layout.paddedTotal, b));
  const [units, trained] = [layout.units, layout.units.filter((u) => u.size > 0)]; // trained: units with anything to reduce
  const [lends, regather] = [tiedLender(layout), plan.regathered(scheme)]; // regather: blocks gathered again after their recompute
  const closes = new Map((f.shardGradients ? [] : gradientBuckets(trained, c.bucketBytes, b)).map((bk) => [bk[bk.length - 1], bk]));
  const window = !c.overlap ? 0 : f.shardGradients ? c.reduceBehind : Infinity;
  let [now, compute] = [0, 0];
  const work = (ms: number) => ((now += ms), (compute += ms));
  const zpp = zeroPPQueues(plan, scheme, cost, link, intraHost, work); // ZeRO++'s rings; its kernels' time as work
  const off = c.offload ? new OffloadQueue(c.offload, runDevice(c).device.hostLinkGBps, c.offload.params && f.shardParameters) : null;
  /** ZeRO-3: this pass's gathers, started `gatherAhead` units ahead of the one computing. */
  const gathered = (order: Unit[]) => {
    const done = new Map<Unit, number>();
    // both halves of a unit: one gather's bytes (ZeRO++: as its components send them, backward on the host)
    const up = (u: Unit) => off?.up(now, (u.shard + u.frozen.shard) * b) ?? now; // offload_param: the shard up first
    const gather = (u: Unit) => (zpp ? zpp.gather(u, order !== units, now) : ring.run(up(u), u.padded + u.frozen.padded, b, 1));
    const start = (i: number) => i < order.length && !done.has(order[i]) && done.set(order[i], gather(order[i]));
    return (i: number) => {
      if (!f.shardParameters) return;
      start(i);
      for (let k = 1; k <= c.gatherAhead; k++) start(i + k);
      now = Math.max(now, done.get(order[i])!);
      if (order !== units && regather?.[order[i].index]) now = gather(order[i]); // the backward's own, on demand
      if (lends?.to === order[i]) now = Math.max(now, gather(lends.unit)); // on demand, after the head's own
    };
  };
  for (let k = 0; k < K; k++) {
    const forward = gathered(units);
    units.forEach((u, i) => (forward(i), work(sum(u, t.forward))));
    const reversed = units.slice(layout.backwardFrom).reverse(); // no backward pass before the first trainable unit
    const backward = gathered(reversed);
    const pending: number[] = [];
    reversed.forEach((u, i) => {
      backward(i);
      work(sum(u, t.backward));
      if (f.shardGradients && u.size > 0) {
        const reduced = zpp ? zpp.reduce(u, now) : ring.run(now, u.padded, b, 1);
        const across = cross ? cross.run(reduced, Math.ceil(u.shard / M) * M, b, 2) : reduced; // the hybrid's shard, across groups
        pending.push(off ? off.copy(across, u.shard * b) : across); // offload: the shard down, behind the backward pass
      } else if (k === K - 1 && closes.has(u)) {
        let end = now;
        for (const v of closes.get(u)!) end = ring.run(now, v.padded, b, f.shardOptimizer ? 1 : 2);
        pending.push(end);
      }
      while (pending.length > window) now = Math.max(now, pending.shift()!);
    });
    while (pending.length) now = Math.max(now, pending.shift()!);
  }
  if (off)
    now = off.finish(now, layout.shardTotal, b, !f.shardGradients); // the host's Adam
  else work(optimizerMs);
  if (f.shardOptimizer && !f.shardParameters) for (const u of trained) now = ring.run(now, u.padded, b, 1); // the new parameters, gathered
  const commMs = ring.busy + (cross?.busy ?? 0) + (zpp?.busy() ?? 0);
  const offload = off ? { offload: { pcieMs: off.pcieMs, hostAdamMs: off.hostAdamMs } } : {};
  return { stepMs: now, computeMs: compute, commMs, exposedMs: now - compute, ...offload };
}
