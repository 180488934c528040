// One training step of one rank, for every scheme: the bands, the forward and backward passes unit by unit,
// the gradient reduction and the Adam update. What differs between the schemes is read from their row of
// SCHEME_TABLE (table.ts); ZeRO-3 alone overrides how a unit's parameters are fetched (zero3.ts).
import type { OptimizerState } from '../adam.js';
import { bytesPerElement, type Elems } from '../../tensor/dtype.js';
import type { Piece, Unit } from '../layout.js';
import type { GroupParams } from '../param-group.js';
import type { Compute } from '../compute.js';
import { microBatch, type Batch } from '../data.js';
import type { SchemeName } from '../../control/run-config.js';
import { SCHEME_TABLE, type SchemeFlags } from './table.js';
import { StepProbe, type StepStats } from './step-probe.js';
import { Gradients } from './gradients.js';
import type { SchemeContext } from './context.js';
import type { QuantError, Values } from '../values.js';
import { TiedWeights } from './tied.js';
import { loadWeights } from './initial-weights.js';
import { PcieTally, placed } from './offload.js';
import { now, turn } from '../../time/clock.js';

export type { SchemeContext } from './context.js';

export type { StepStats } from './step-probe.js';

/** Longer than awaiting a promise that has already settled takes: communication was really waited for. */
const REAL_WAIT_MS = 0.2;

/** A unit's parameters ready for compute, and whatever has to be released afterwards. */
export interface UnitParams {
  frozen: Elems; // the unit's unpadded frozen half, in the working dtype: the compute widens bf16 itself
  trainable: Elems; // its unpadded trainable half
  gathered: Elems | null;
}

export class Base {
  readonly name: SchemeName = 'dp';

  protected ctx!: SchemeContext;
  /** Conversions and Adam: real, or a what-if rank's none. */
  protected get values(): Values {
    return this.ctx.values;
  }
  protected compute!: Compute;
  /** The working copy compute reads, in the wire dtype (16-bit, or fp32 with --wire-dtype fp32): the full
   *  padded layout, or this rank's shard. */
  protected working!: Elems;
  /** The frozen parameters' working copy (frozen halves; empty when nothing is frozen): laid out as `working`. */
  protected frozenWorking!: Elems;
  /** Where each unit's gradient goes: kept, bucketed, reduced, summed over micro-batches. */
  protected gradients!: Gradients;
  /** fp32 master weights and Adam moments: full padded layout, or this rank's shard. */
  protected master!: Float32Array;
  protected m!: Float32Array;
  protected v!: Float32Array;
  /** fp32 compute scratch, made once: a unit's gradient until the unit is released. */
  private unitGrad!: Float32Array;
  private t = 0;
  private lastMicro = true; // the micro-batch running is the optimizer step's last
  private probe!: StepProbe; // this step's measurements
  private tied: TiedWeights | null = null; // a head that borrows the token table (tied.ts)
  private readonly activationsKey = {}; // the ledger's key for the activations band

  /** Allocate this rank's bands and load the initial parameters. No communication. */
  setup(ctx: SchemeContext): this {
    if (ctx.offload && !ctx.pcie) ctx = { ...ctx, pcie: new PcieTally() };
    const { layout, ledger, dtype, theta0 } = ctx;
    this.ctx = ctx;
    const [host, hostParams] = [!!ctx.offload, !!ctx.offload?.params && this.flags.shardParameters]; // offload.ts
    this.compute = ctx.compute;
    const n = (sharded: boolean) => (sharded ? layout.shardTotal : layout.paddedTotal);
    this.working = ledger.alloc(placed('params16', hostParams), dtype, n(this.flags.shardParameters));
    this.frozenWorking = ledger.alloc(placed('frozen16', hostParams), dtype, this.flags.shardParameters ? layout.frozenShardTotal : layout.frozenPaddedTotal);
    this.master = ledger.allocF32(placed('master', host), n(this.flags.shardOptimizer));
    this.m = ledger.allocF32(placed('m', host), this.master.length);
    this.v = ledger.allocF32(placed('v', host), this.master.length);
    this.gradients = new Gradients(ctx, this.flags, this.master.length);
    this.unitGrad = ledger.allocF32('compute', layout.maxUnitPadded);
    this.tied = TiedWeights.of(ctx);
    loadWeights(ctx, this.flags, { master: this.master, working: this.working, frozenWorking: this.frozenWorking, scratch: this.unitGrad }, theta0);
    return this;
  }

  /** This scheme's row of the table: all that DP, ZeRO-1 and ZeRO-2 differ in. */
  get flags(): SchemeFlags {
    return SCHEME_TABLE[this.name];
  }

  /** Everything Adam carries from step to step, for checkpoints. */
  optimizerState(): OptimizerState {
    return { master: this.master, m: this.m, v: this.v, step: this.t };
  }

  /** Continue from a checkpoint: same layout, so the arrays drop straight in. The 16-bit working copy is
   *  rebuilt from the masters as after any update (ZeRO-1/2: an all-gather, outside any step's metrics). */
  async loadOptimizerState(s: OptimizerState): Promise<void> {
    for (const [name, from, to] of [
      ['master', s.master, this.master],
      ['m', s.m, this.m],
      ['v', s.v, this.v],
    ] as const) {
      if (from.length !== to.length) throw new RangeError(`checkpoint ${name} has ${from.length} values, this rank holds ${to.length}`);
      to.set(from);
    }
    this.t = s.step;
    await this.refreshWorkingCopy();
  }

  /** The frozen parameters as this rank holds them (whole or its shard, padded), widened to fp32. */
  frozenState(): Float32Array {
    return this.values.toF32(this.frozenWorking, new Float32Array(this.frozenWorking.length));
  }

  /** What quantization lost since the last call (ZeRO++'s qwZ on the weights, qgZ on the gradients: zeropp/);
   *  null where nothing is quantized. */
  takeQuantError(): { weights?: QuantError; grads?: QuantError } | null {
    return null;
  }

  /** This rank's fp32 master weights: its shard, or (DP) the whole padded model. */
  masterState(): { data: Float32Array; sharded: boolean } {
    return { data: this.master, sharded: this.flags.shardOptimizer };
  }

  /** One optimizer step: K micro-batches (each unit forward, the loss, each unit backward with its gradient
   *  sent on its way), then the update. The probe measures; the flags, the context (the hybrid's rings) and
   *  one overridable method (how a unit's parameters are acquired) are all that differs between the schemes. */
  async step(batch: Batch): Promise<StepStats> {
    const K = this.ctx.accumulate ?? 1;
    const { coll, cross, host, strides } = this.ctx;
    const colls = [coll, cross, host, ...(strides?.group ?? []), ...(strides?.cross ?? [])].filter((c) => c !== undefined);
    this.probe = new StepProbe(colls, this.ctx.ledger, () => this.compute.otherThreadBytes);
    let loss = 0;
    for (let k = 0; k < K; k++) {
      this.lastMicro = k === K - 1;
      loss += (await this.microStep(microBatch(batch, k, K))) / K; // equal micro-batches: the mean of means
    }
    if (this.ctx.offload?.dpu) {
      // ZeRO-Offload's delayed update: the next step's passes get the weights of the update before this one,
      // while this one runs (on the host, behind them: offload.ts)
      await this.waitFor(this.refreshWorkingCopy());
      await this.probe.optimizer(() => this.update());
    } else {
      await this.probe.optimizer(() => this.update());
      await this.waitFor(this.refreshWorkingCopy());
    }
    this.probe.sample();
    const pcie = this.ctx.pcie?.take();
    return { ...this.probe.finish(loss), ...(pcie ? { pcie } : {}) };
  }

  /** One micro-batch's forward and backward passes, its gradients reduced (or, before the last micro-batch
   *  of DP and ZeRO-1, summed locally); returns its mean loss. */
  private async microStep(batch: Batch): Promise<number> {
    const { layout } = this.ctx;
    await this.compute.start(batch.x, batch.rows);
    this.accountCompute();
    for (const u of layout.units) await this.forwardUnit(u);
    // The loss gradient is pre-divided by N*K (N: every data-parallel rank): the sum over ranks and
    // micro-batches is then the gradient of the global mean loss.
    const loss = await this.compute.loss(batch.y, 1 / ((this.ctx.ranks ?? layout.world) * (this.ctx.accumulate ?? 1)));
    // A reduction starts as soon as its gradients exist (a unit's, or a bucket's) and keeps running behind
    // the next units' backward passes, as many as the window allows.
    const window = this.reductionWindow();
    const reducing: Promise<void>[] = [];
    // Units before the first with anything trainable need no backward pass (frozen embeddings, frozen blocks).
    for (const u of layout.units.slice(layout.backwardFrom).reverse()) {
      const { reduced } = await this.backwardUnit(u);
      if (reduced) reducing.push(reduced);
      while (reducing.length > window) await this.waitFor(reducing.shift()!);
      this.probe.sample();
    }
    while (reducing.length) await this.waitFor(reducing.shift()!);
    return loss;
  }

  /** What the forward pass keeps for the backward pass, and the rest of the compute's memory. */
  private accountCompute(): void {
    const { ledger } = this.ctx;
    ledger.account('activations', this.activationsKey, this.compute.activationBytes);
    ledger.account('compute', this.compute, this.compute.arenaBytes - this.compute.activationBytes);
  }

  private async forwardUnit(u: Unit): Promise<void> {
    const p = await this.waitFor(this.acquireUnit(u, 'forward'));
    const lent = await this.lentTo(u, p, 'forward');
    this.probe.sample();
    await this.probe.unit(u.index, 'forward', async () => {
      for (const piece of u.pieces) await this.compute.forward(piece.layer.index, this.paramsOf(p, piece, lent));
    });
    this.releaseUnit(p);
    if (lent && lent !== p) this.releaseUnit(lent);
    // the event loop turns once between units: collectives in flight read what the kernel received meanwhile
    // and send their next chunks, so communication progresses even when compute runs inline
    await turn();
  }

  /** The parameters of the unit that lends `u` the token table (a tied head's), or null: `p` itself where
   *  it is the same unit, else acquired for this one use (a gather under ZeRO-3). */
  private async lentTo(u: Unit, p: UnitParams, pass: 'forward' | 'backward'): Promise<UnitParams | null> {
    const from = this.tied?.lenderFor(u);
    if (!from) return null;
    return from === u ? p : this.waitFor(this.lendUnit(from, pass));
  }

  /** A piece's parameters for compute: its own, and a tied head's with the table after them. */
  private paramsOf(p: UnitParams, piece: Piece, lent: UnitParams | null): GroupParams {
    const own = groupParams(p, piece);
    return lent && this.tied?.borrows(piece) ? this.tied.paramsFor(own, lent) : own;
  }

  /** Unit `u`'s parameters for its backward pass, given those acquired for it (ZeRO-3 may gather again: zero3.ts). */
  protected regathered(_u: Unit, p: UnitParams): Promise<UnitParams> {
    return Promise.resolve(p);
  }

  /** Unit `u`'s parameters for a tied head's one use. Here they are resident. */
  protected lendUnit(u: Unit, pass: 'forward' | 'backward'): Promise<UnitParams> {
    return Base.prototype.acquireUnit.call(this, u, pass);
  }

  /** Reductions that may run behind the backward pass: none without overlap; a bucket costs no memory of
   *  its own in DP and ZeRO-1 (it is a view of the gradients), so all of them, as in DDP; sharded gradients
   *  hold a bucket each, so `reduceBehind`. */
  private reductionWindow(): number {
    if (this.ctx.overlap === false) return 0;
    return this.flags.shardGradients ? (this.ctx.reduceBehind ?? 0) : Infinity;
  }

  /** Unit `u` backward; resolves once it is computed, with the reduction its gradient started (if any), still running. */
  private async backwardUnit(u: Unit): Promise<{ reduced: Promise<void> | null }> {
    const p = await this.waitFor(this.regathered(u, await this.waitFor(this.acquireUnit(u, 'backward'))));
    const lent = await this.lentTo(u, p, 'backward');
    this.probe.sample();
    const g = this.unitGrad;
    g.fill(0, u.size, u.padded); // the layers fill the unit; its padding must reduce as zeros
    await this.probe.unit(u.index, 'backward', async () => {
      for (const piece of [...u.pieces].reverse()) {
        const [l, tied] = [piece.layer, lent ? this.tied : null];
        const own = l.size - l.frozen;
        const into = tied?.borrows(piece) ? tied.gradFor(own) : g.subarray(piece.trainAt, piece.trainAt + own);
        await this.compute.backward(l.index, this.paramsOf(p, piece, lent), into);
        if (tied?.borrows(piece)) tied.settle(g);
      }
    });
    this.tied?.addCarried(u, g);
    this.releaseUnit(p);
    if (lent && lent !== p) this.releaseUnit(lent);
    const reduced = this.gradients.unitReady(u, g.subarray(0, u.padded), this.lastMicro); // copies g out at once
    reduced?.catch(() => undefined); // awaited by the step, where its error surfaces
    // between units, as after a forward unit
    await turn();
    return { reduced }; // wrapped: an async function returning the promise itself would wait for it
  }

  /** Adam on the gradients this rank owns (on a modeled device: its time). */
  private async update(): Promise<void> {
    this.t++;
    const owned = this.gradients.forAdam();
    this.probe.sample(true); // the update's moment: every gradient is in, the fp32 gradient Adam reads is filled
    this.values.adam(this.master, this.m, this.v, owned, this.t, this.ctx.hyper);
    const off = this.ctx.offload;
    if (off && this.compute.hostAdam)
      await this.compute.hostAdam(owned.length, off.dpu); // on the host (offload.ts)
    else await this.compute.optimizer?.(owned.length, bytesPerElement(this.ctx.dtype));
    this.gradients.consumed();
  }

  /** Await communication, counting the time the step stands still for it (and telling a modeled device,
   *  which stood still too, when it really waited). */
  protected async waitFor<T>(p: Promise<T>): Promise<T> {
    const t0 = now();
    const v = await this.probe.wait(p);
    const t1 = now();
    if (t1 - t0 > REAL_WAIT_MS) this.compute.inputsReady?.(t1);
    return v;
  }

  /** Parameters of unit `u` for compute. Without sharded parameters they are already here. */
  protected async acquireUnit(u: Unit, _pass: 'forward' | 'backward'): Promise<UnitParams> {
    const frozen = this.frozenWorking.subarray(u.frozen.paddedOffset, u.frozen.paddedOffset + u.frozen.size);
    return { frozen, trainable: this.working.subarray(u.paddedOffset, u.paddedOffset + u.size), gathered: null };
  }

  protected releaseUnit(p: UnitParams): void {
    this.ctx.ledger.free(p.gathered);
  }

  /** Bring the 16-bit working copy up to date with the new master weights. */
  protected async refreshWorkingCopy(): Promise<void> {
    const { coll, layout } = this.ctx;
    const pcie = this.ctx.offload && !(this.ctx.offload.params && this.flags.shardParameters) ? this.ctx.pcie : undefined; // the new shard, host to device
    const b = bytesPerElement(this.ctx.dtype);
    if (this.ctx.offload) await this.compute.hostIdle?.(); // the host's Adam has made them
    if (pcie) await this.compute.copy?.(layout.shardTotal * b); // a modeled device: the shard's time on the host link
    // Each copy made here is tallied as it is made: what it wrote, host to device where the masters are the host's.
    const up = (to: Elems) => pcie && (pcie.h2d += to.byteLength);
    if (this.flags.shardParameters || !this.flags.shardOptimizer) {
      this.values.fromF32(this.master, this.working); // same layout on both sides
      up(this.working);
      return;
    }
    // ZeRO-1/2: round the owned slice, then all-gather every unit's 16-bit parameters (frozen ones never change).
    for (const u of layout.units) {
      if (u.size === 0) continue;
      const own = layout.ownOffset(u);
      this.values.fromF32(this.master.subarray(u.shardOffset, u.shardOffset + u.shard), this.working.subarray(own, own + u.shard));
      up(this.working.subarray(own, own + u.shard));
      await coll.allGather(this.working.subarray(own, own + u.shard), this.working.subarray(u.paddedOffset, u.paddedOffset + u.padded), `params u${u.index}`);
    }
  }
}

/** Group `piece`'s frozen prefix and trainable rest, from its unit's halves. */
function groupParams(p: UnitParams, piece: Piece): GroupParams {
  const l = piece.layer;
  return [p.frozen.subarray(piece.frozenAt, piece.frozenAt + l.frozen), p.trainable.subarray(piece.trainAt, piece.trainAt + l.size - l.frozen)];
}

/** Data parallelism is the base case: everything resident on every rank, gradients all-reduced. */
export class DataParallel extends Base {}
