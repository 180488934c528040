// ZeRO-3 with DeepSpeed's persisted parameters (persisted-layout.ts): each rank keeps every persisted tensor
// whole in the `kept16` band, a unit's gather sends only the rest of each shard (an all-gather of unequal
// segments: all-gather-v.ts) and fills the persisted places from the band, and after the update the persisted
// values every rank updated in its shard are all-gathered into the band once (DeepSpeed's _post_step).
import { allGatherV } from '../../collectives/all-gather-v.js';
import type { Elems } from '../../tensor/dtype.js';
import type { Half } from '../layout.js';
import { runsIn, type PersistedHalf, type PersistedLayout } from '../persisted-layout.js';
import type { SchemeContext } from './context.js';

export class Persisted {
  /** Every persisted tensor's 16-bit values, whole, in the model's order. */
  private readonly kept: Elems;

  constructor(
    private readonly ctx: SchemeContext,
    readonly plan: PersistedLayout,
  ) {
    this.kept = ctx.ledger.alloc('kept16', ctx.dtype, plan.keptTotal);
    this.load(ctx.theta0);
  }

  /** The initial values, rounded as the working copy's (so a gathered unit holds the same bits either way). */
  private load(theta: Float32Array): void {
    for (const u of this.plan.units)
      for (const h of [u.trainable, u.frozen]) {
        if (!h) continue;
        let at = h.keptOffset;
        h.runs
          .filter((r) => r.kept)
          .forEach((r, i) => {
            this.ctx.values.fromF32(theta.subarray(h.modelAt[i], h.modelAt[i] + r.n), this.kept.subarray(at, at + r.n));
            at += r.n;
          });
      }
  }

  /** Half `h` of a unit (its persisted places `p`) gathered into `dest` (its unpadded elements): this rank's
   *  `own` shard without its persisted elements, every rank's likewise, the persisted places from the band.
   *  Its collectives are numbered when called. */
  gather(h: Half, p: PersistedHalf, own: Elems, dest: Elems, label: string): Promise<void> {
    const { coll, ledger, dtype, layout } = this.ctx;
    const r = layout.rank;
    const total = p.gathered.reduce((a, b) => a + b, 0);
    const packed = ledger.alloc('comm', dtype, total);
    const start = p.gathered.slice(0, r).reduce((a, b) => a + b, 0);
    let at = start;
    for (const x of runsIn(p, r * h.shard, (r + 1) * h.shard, false)) {
      packed.set(own.subarray(x.at - r * h.shard, x.at - r * h.shard + x.n) as never, at);
      at += x.n;
    }
    const done = allGatherV(coll, packed.subarray(start, start + p.gathered[r]), packed, p.gathered, label);
    return done
      .then(() => {
        // The gathered elements arrive in the model's order (shards are consecutive): lay them and the kept ones out.
        let [g, k] = [0, p.keptOffset];
        for (const x of p.runs) {
          const from = x.kept ? this.kept.subarray(k, k + x.n) : packed.subarray(g, g + x.n);
          dest.set(from as never, x.at);
          if (x.kept) k += x.n;
          else g += x.n;
        }
      })
      .finally(() => ledger.free(packed));
  }

  /** After the update: the persisted values of every rank's updated shard into the band (the trainable halves;
   *  frozen ones never change). `working`: this rank's shard of the 16-bit working copy. */
  async refresh(working: Elems): Promise<void> {
    const { coll, layout } = this.ctx;
    const r = layout.rank;
    const all = layout.units.map((u, i) => {
      const p = this.plan.units[i].trainable;
      if (!p) return null;
      const band = this.kept.subarray(p.keptOffset, p.keptOffset + p.kept);
      const start = p.keptPerRank.slice(0, r).reduce((a, b) => a + b, 0);
      let at = start;
      for (const x of runsIn(p, r * u.shard, (r + 1) * u.shard, true)) {
        const from = u.shardOffset + x.at - r * u.shard;
        band.set(working.subarray(from, from + x.n) as never, at);
        at += x.n;
      }
      return allGatherV(coll, band.subarray(start, start + p.keptPerRank[r]), band, p.keptPerRank, `persisted u${u.index}`);
    });
    await Promise.all(all); // all started at once, in unit order: numbered alike on every rank
  }
}
