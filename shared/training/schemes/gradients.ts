// Where a unit's gradient goes once the backward pass has computed it, for every scheme: kept whole and
// all-reduced (DP) or reduce-scattered (ZeRO-1) in DDP's buckets, or reduce-scattered unit by unit so that
// only the owned slice stays (ZeRO-2/3); summed over micro-batches in fp32 with --accumulate; and handed to
// Adam as fp32 laid out like the master weights.
import { bytesPerElement, dtypeOf, type Elems } from '../../tensor/dtype.js';
import type { Unit } from '../layout.js';
import { DEFAULT_BUCKET_BYTES, gradientBuckets } from '../buckets.js';
import type { SchemeFlags } from './table.js';
import type { SchemeContext } from './context.js';

export class Gradients {
  /** In the working dtype: full padded layout, or this rank's shard. */
  private readonly grads: Elems;
  /** fp32 scratch for the gradient Adam reads, where `grads` is 16-bit or laid out otherwise. */
  private readonly owned: Float32Array | null;
  /** Whole gradients (DP, ZeRO-1): DDP's buckets, and the bucket each unit closes (its last to be written). */
  private readonly buckets: Unit[][] = [];
  private readonly closes = new Map<Unit, number>();
  /** Reductions run one after another, in the order they were started, like collectives queued on one
   *  stream: the first bucket's bytes are not slowed by the next one's. */
  private queue: Promise<unknown> = Promise.resolve();
  /** --accumulate K > 1: the fp32 sum of the micro-batches' gradients (whole for DP and ZeRO-1, the owned
   *  shard for ZeRO-2/3), and a reduced shard widened to fp32 before it is added. */
  private readonly accum: Float32Array | null = null;
  private readonly widened: Float32Array | null = null;
  /** How a unit's gradient is reduce-scattered to the slice this rank owns: the ring's reduce-scatter, or a
   *  component's own (ZeRO++'s qgZ plugs in here: zeropp/qgz.ts). */
  reduceShard: (bucket: Elems, owned: Elems, label: string) => Promise<void>;

  constructor(
    private readonly ctx: SchemeContext,
    private readonly flags: SchemeFlags,
    masterLength: number,
  ) {
    const { layout, ledger, dtype } = ctx;
    this.reduceShard = async (bucket, owned, label) => void (await ctx.coll.reduceScatter(bucket, owned, label));
    this.grads = ledger.alloc('grads', dtype, flags.shardGradients ? layout.shardTotal : layout.paddedTotal);
    const sameLayout = flags.shardGradients === flags.shardOptimizer;
    // offload: the gradient Adam reads is the host's, and sharded gradients are summed there (schemes/offload.ts)
    const host = !!ctx.offload;
    this.owned = sameLayout && dtypeOf(this.grads) === 'fp32' && !host ? null : ledger.allocF32(host ? 'host grads' : 'compute', masterLength);
    if ((ctx.accumulate ?? 1) > 1) {
      this.accum = ledger.allocF32(host && flags.shardGradients ? 'host accum' : 'accum', flags.shardGradients ? layout.shardTotal : layout.paddedTotal);
      if (flags.shardGradients) this.widened = ledger.allocF32('compute', layout.maxUnitPadded);
    }
    if (!flags.shardGradients) {
      // Units with nothing trainable have no gradient to reduce (and, before the first trainable unit, no backward pass).
      const trained = layout.units.filter((u) => u.size > 0);
      this.buckets = gradientBuckets(trained, ctx.bucketBytes ?? DEFAULT_BUCKET_BYTES, bytesPerElement(dtype));
      this.buckets.forEach((b, i) => this.closes.set(b[b.length - 1], i));
    }
  }

  /** Unit `u`'s gradient `g` (fp32, padded length, already divided by N*K) has just been computed: keep it
   *  (copied out at once: `g` is reused), and start the reduction it completes, if any. `last`: this is the
   *  optimizer step's last micro-batch. */
  unitReady(u: Unit, g: Float32Array, last: boolean): Promise<void> | null {
    const { ledger, dtype } = this.ctx;
    if (u.size === 0) return null; // all frozen: nothing to reduce
    if (!this.flags.shardGradients) {
      // DDP's no_sync: before the last micro-batch the gradient is only summed here, in fp32.
      if (this.accum) {
        const sum = this.accum.subarray(u.paddedOffset, u.paddedOffset + u.padded);
        if (!last) return (this.ctx.values.addF32(sum, g), null);
        this.ctx.values.addF32(g, sum);
        sum.fill(0);
      }
      this.ctx.values.fromF32(g, this.grads.subarray(u.paddedOffset, u.paddedOffset + u.padded));
      const b = this.closes.get(u);
      return b === undefined ? null : this.reduce(() => this.reduceBucket(b));
    }
    // Sharded gradients: copy this unit into a bucket now, reduce-scatter it, keep only the owned slice
    // (summed in fp32 over the micro-batches when accumulating, as DeepSpeed's stage 2 does).
    const bucket = ledger.alloc('bucket', dtype, u.padded);
    this.ctx.values.fromF32(g, bucket);
    const owned = this.grads.subarray(u.shardOffset, u.shardOffset + u.shard);
    return this.reduce(async () => {
      await this.reduceShard(bucket, owned, `grad u${u.index}`);
      if (this.ctx.cross) await this.ctx.cross.allReduce(owned, `grad u${u.index} across groups`);
      if (this.accum)
        this.ctx.values.addF32(this.accum.subarray(u.shardOffset, u.shardOffset + u.shard), this.ctx.values.toF32(owned, this.widened!.subarray(0, u.shard)));
      if (this.ctx.pcie) {
        // offload: each reduced shard goes down as soon as it is reduced, behind the backward pass (summed on the host)
        this.ctx.pcie.d2h += owned.byteLength;
        this.ctx.compute.copyBehind?.(owned.byteLength);
      }
    }).finally(() => ledger.free(bucket));
  }

  /** fp32 gradients laid out like the master weights this rank updates. */
  forAdam(): Float32Array {
    const { layout, pcie } = this.ctx;
    if (this.accum && this.flags.shardGradients) return this.accum; // summed over the micro-batches
    // ZeRO-1 offloading: the reduced shard goes down once, after the last micro-batch's reduction (a modeled
    // device's time for all of it now; the bytes tallied below, segment by segment, as they are copied)
    if (pcie && !this.flags.shardGradients) this.ctx.compute.copyBehind?.(this.master() * bytesPerElement(this.ctx.dtype));
    const out = this.owned;
    if (!out) return this.grads as Float32Array; // fp32, laid out like the masters already
    if (this.flags.shardGradients === this.flags.shardOptimizer) return this.ctx.values.toF32(this.grads, out);
    // ZeRO-1: whole gradients are resident, but only the owned segment of each unit was reduced.
    for (const u of layout.units) {
      if (u.size === 0) continue;
      const own = layout.ownOffset(u);
      const segment = this.grads.subarray(own, own + u.shard);
      this.ctx.values.toF32(segment, out.subarray(u.shardOffset, u.shardOffset + u.shard));
      if (pcie) pcie.d2h += segment.byteLength;
    }
    return out;
  }

  /** Elements of the gradient Adam reads: the rank's shard, or (DP) the whole padded model. */
  private master(): number {
    return this.flags.shardOptimizer ? this.ctx.layout.shardTotal : this.ctx.layout.paddedTotal;
  }

  /** Adam has read them: the next step's micro-batches sum afresh. */
  consumed(): void {
    if (this.accum && this.flags.shardGradients) this.accum.fill(0);
  }

  /** Queue a reduction behind the ones already started. */
  private reduce(run: () => Promise<unknown>): Promise<void> {
    const done = this.queue.then(run).then(() => undefined);
    this.queue = done.catch(() => undefined);
    return done;
  }

  /** Whole gradients: bucket `b`'s units, all-reduced (DP) or reduce-scattered so that every rank holds the
   *  sum of the slice it updates (ZeRO-1). A collective per unit, as ZeRO-2/3 reduce: the ring then splits and
   *  sums every unit in the same segments and order under every scheme, so bf16 rounds the same way and the
   *  schemes' losses stay comparable (one all-reduce over the bucket's span would sum in other segments).
   *  They are all started at once, as one bucket's bytes are in DDP: a small unit's hops (a ring step each,
   *  waiting on the slowest rank) do not hold back a large unit's transfer, which measured 2 ms a step less
   *  on the 1 Gbit LAN (docs/performance.md). Started in the same call on every rank, they are numbered alike. */
  private async reduceBucket(b: number): Promise<void> {
    const { coll, layout } = this.ctx;
    const reductions = this.buckets[b].map((u) => {
      const unit = this.grads.subarray(u.paddedOffset, u.paddedOffset + u.padded);
      const label = `grad b${b} u${u.index}`;
      if (this.flags.shardOptimizer) return coll.reduceScatter(unit, unit.subarray(layout.rank * u.shard, (layout.rank + 1) * u.shard), label);
      return coll.allReduce(unit, label);
    });
    await Promise.all(reductions);
  }
}
