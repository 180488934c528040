// ZeRO-3: the 16-bit parameters are sharded too, so a unit is all-gathered before each use and released
// after it: once for the forward pass, and again for the backward pass (never kept in between). That second
// gather is the third Psi of its traffic. Everything else is ZeRO-2's step. With a persistence threshold
// (DeepSpeed's), small tensors are kept whole and left out of the gathers (persisted.ts).
import type { SchemeName } from '../../control/run-config.js';
import type { Half, Unit } from '../layout.js';
import type { Elems } from '../../tensor/dtype.js';
import type { PersistedHalf } from '../persisted-layout.js';
import type { SchemeContext, UnitParams } from './base.js';
import { Zero2 } from './zero2.js';
import { Persisted } from './persisted.js';
import { persistedLayout } from '../persisted-layout.js';
import { now, sleep } from '../../time/clock.js';

/** Why a unit is gathered: its own use in the pass, again for its backward pass after its recompute
 *  (--recompute-regather), or for a tied head. */
export type GatherUse = 'own' | 'again' | 'tied';
export const GATHER_WHY: Record<GatherUse, string> = { own: '', again: ' again after its recompute', tied: ' for the tied head' };

export class Zero3 extends Zero2 {
  override readonly name: SchemeName = 'zero3';
  /** Gathers already started, by pass and unit: the prefetch window. */
  private readonly inflight = new Map<string, Promise<UnitParams>>();
  private persisted: Persisted | null = null;

  override setup(ctx: SchemeContext): this {
    super.setup(ctx);
    if (ctx.persist) this.persisted = new Persisted(ctx, persistedLayout(ctx.layout, ctx.persist));
    return this;
  }

  /** ZeRO-1/2's refresh is none here (the working copy is the shard); the persisted tensors' values are
   *  all-gathered into their band. */
  protected override async refreshWorkingCopy(): Promise<void> {
    await super.refreshWorkingCopy();
    await this.persisted?.refresh(this.working);
  }

  protected override async acquireUnit(u: Unit, pass: 'forward' | 'backward'): Promise<UnitParams> {
    const { layout, gatherAhead = 0 } = this.ctx;
    // The backward pass stops at the first unit with anything trainable (layout.backwardFrom): gathering
    // ahead past it would fetch what no one computes.
    const order = pass === 'forward' ? layout.units : layout.units.slice(layout.backwardFrom).reverse();
    const at = order.indexOf(u);
    const key = (v: Unit) => `${pass}:${v.index}`;
    const mine = this.inflight.get(key(u)) ?? this.gather(u, pass);
    this.inflight.delete(key(u));
    // Start the next units' gathers now, so their bytes move while this unit computes. Every rank issues
    // them in the same order, so the ring collectives still pair up. Each is released after its own use.
    for (let k = 1; k <= gatherAhead && at + k < order.length; k++) {
      const v = order[at + k];
      if (!this.inflight.has(key(v))) {
        const p = this.gather(v, pass);
        p.catch(() => undefined); // awaited (and its error raised) when the unit's turn comes
        this.inflight.set(key(v), p);
      }
    }
    return mine;
  }

  /** DeepSpeed's ZeRO-3 under activation checkpointing (--recompute-regather): the block gathered for its
   *  recompute is released after it and gathered again for its backward pass. zerowire recomputes inside the
   *  unit's backward call, so both gathers come before it: DeepSpeed's bytes, and the second gather waited for
   *  (DeepSpeed's could run behind the recompute). */
  protected override async regathered(u: Unit, p: UnitParams): Promise<UnitParams> {
    if (!this.ctx.regather?.[u.index]) return p;
    this.releaseUnit(p);
    return this.gather(u, 'backward', 'again');
  }

  /** A tied head's table: the lending unit gathered for this one use, apart from the prefetch window. */
  protected override lendUnit(u: Unit, pass: 'forward' | 'backward'): Promise<UnitParams> {
    return this.gather(u, pass, 'tied');
  }

  /** Both halves of unit `u` into one buffer, [frozen | trainable], each padded: frozen weights are gathered
   *  for every use as the trainable ones are (the backward pass needs them for the input's gradient). */
  protected async gather(u: Unit, pass: 'forward' | 'backward', use: GatherUse = 'own'): Promise<UnitParams> {
    const why = GATHER_WHY[use];
    const { ledger, dtype } = this.ctx;
    const f = u.frozen;
    const gathered = ledger.alloc('gathered', dtype, f.padded + u.padded);
    const [frozen, trainable] = [gathered.subarray(0, f.padded), gathered.subarray(f.padded)];
    // Both issued now, in one order on every rank (a gather started ahead must not slip between them).
    const p = this.persisted?.plan.units[u.index];
    const both = [
      f.size ? this.gatherHalf(f, this.frozenWorking, frozen, p?.frozen ?? null, `${pass} gather u${u.index} frozen${why}`) : null,
      u.size ? this.gatherHalf(u, this.working, trainable, p?.trainable ?? null, `${pass} gather u${u.index}${why}`) : null,
    ];
    await Promise.all(both);
    return { frozen: frozen.subarray(0, f.size), trainable: trainable.subarray(0, u.size), gathered };
  }

  /** One half of a unit gathered from the shards of `working` into `out`: whole, or without its persisted
   *  tensors (`kept`), which the band fills in. */
  private gatherHalf(h: Half, working: Elems, out: Elems, kept: PersistedHalf | null, label: string): Promise<unknown> {
    const own = working.subarray(h.shardOffset, h.shardOffset + h.shard);
    let up: number | undefined; // offload_param: the shard goes up to the device first
    if (this.ctx.offload?.params && this.ctx.pcie) {
      this.ctx.pcie.h2d += own.byteLength;
      up = this.ctx.compute.copyBehind?.(own.byteLength);
    }
    if (kept && this.persisted) {
      const done = this.persisted.gather(h, kept, own, out.subarray(0, h.size), label);
      return up === undefined ? done : done.then(() => this.ctx.compute.inputsReady?.(up)); // computed no earlier than it was up
    }
    if (up === undefined) return this.ctx.coll.allGather(own, out, label);
    // a modeled device's gather starts once the shard is up, its collective numbered now
    const [n] = this.ctx.coll.reserve(1);
    return sleep(up - now()).then(() => this.ctx.coll.allGather(own, out, label, n));
  }
}
