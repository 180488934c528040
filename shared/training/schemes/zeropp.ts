// ZeRO-3 with ZeRO++'s components (Wang et al., 2023), each switchable (--qwz, --hpz, --qgz; --scheme zeropp
// all three):
// - qwZ: every parameter gather sends each rank's shard block-quantized to int8 (a scale per block;
//   tensor/quantize.ts), dequantized on arrival: about half a 16-bit gather's bytes;
// - hpZ: the forward gather's weights are also kept, partitioned over the host's G ranks (a secondary copy of
//   Ψ/G per rank), so that the backward gather runs on the host's own ring and nothing of it leaves the host;
// - qgZ: the gradients' reduce-scatter as two all-to-alls of int4 blocks (qgz.ts; gradients.ts calls it).
// Everything else is ZeRO-3's.
import type { SchemeName } from '../../control/run-config.js';
import { quantizedElems, type QuantFormat } from '../../tensor/quantize.js';
import type { Elems } from '../../tensor/dtype.js';
import type { Unit } from '../layout.js';
import { noQuantError, type QuantError } from '../values.js';
import type { UnitParams } from './base.js';
import type { SchemeContext } from './context.js';
import { Zero3 } from './zero3.js';

export class ZeroPP extends Zero3 {
  override readonly name: SchemeName = 'zero3';
  /** hpZ: this rank's part of every unit as gathered, M·S values of a unit of shard S (M = N/G groups). */
  private secondary: Elems | null = null;
  /** What qwZ's quantization lost this step, over the shards this rank quantized. */
  private lost: QuantError = noQuantError();

  override setup(ctx: SchemeContext): this {
    super.setup(ctx);
    const zpp = ctx.zeropp!;
    if (ctx.layout.frozenParams > 0) throw new Error("ZeRO++'s components with frozen parameters: not yet");
    if (zpp.qgz && !ctx.strides) throw new Error('qgZ needs its stride rings within and across hosts');
    if (zpp.hpz) {
      if (!ctx.host) throw new Error('hpZ needs the ring of the ranks of this host');
      this.secondary = ctx.ledger.alloc('secondary', ctx.dtype, ctx.layout.paddedTotal / ctx.host.world);
    }
    return this;
  }

  /** The quantization error since the last call (a step's), weights' and gradients', and start afresh. */
  override takeQuantError(): { weights?: QuantError; grads?: QuantError } | null {
    const grads = super.takeQuantError()?.grads;
    const weights = this.ctx.zeropp?.qwz ? this.lost : undefined;
    this.lost = noQuantError();
    return weights || grads ? { ...(weights ? { weights } : {}), ...(grads ? { grads } : {}) } : null;
  }

  private get format(): QuantFormat {
    return { bits: 8, block: this.ctx.zeropp!.block };
  }

  protected override async gather(u: Unit, pass: 'forward' | 'backward'): Promise<UnitParams> {
    const { coll, ledger, dtype, zeropp, host } = this.ctx;
    const gathered = ledger.alloc('gathered', dtype, u.padded);
    const none = this.frozenWorking.subarray(0, 0);
    const M = coll.world / (host?.world ?? 1); // hosts: a host's rank keeps M shards' worth of each unit
    const label = `${pass} gather u${u.index}`;
    if (pass === 'backward' && zeropp!.hpz) {
      await host!.allGather(this.secondaryOf(u, M), gathered, `${label} (host)`);
      return { frozen: none, trainable: gathered.subarray(0, u.size), gathered };
    }
    const mine = this.working.subarray(u.shardOffset, u.shardOffset + u.shard);
    if (zeropp!.qwz) await this.quantizedGather(mine, gathered, u.shard, label);
    else await coll.allGather(mine, gathered, label);
    if (pass === 'forward' && zeropp!.hpz) {
      const S = M * u.shard;
      this.secondaryOf(u, M).set(gathered.subarray(host!.rank * S, (host!.rank + 1) * S) as never);
    }
    return { frozen: none, trainable: gathered.subarray(0, u.size), gathered };
  }

  private secondaryOf(u: Unit, M: number): Elems {
    return this.secondary!.subarray(M * u.shardOffset, M * (u.shardOffset + u.shard));
  }

  /** Every rank's shard of S values quantized, all-gathered as 16-bit units, dequantized into `out`. The
   *  collective is issued before anything is awaited, so gathers started ahead keep every rank's order. */
  private async quantizedGather(mine: Elems, out: Elems, S: number, label: string): Promise<void> {
    const { coll, ledger } = this.ctx;
    const f = this.format;
    const Q = quantizedElems(S, f);
    const packed = ledger.alloc('comm', 'bf16', Q) as Uint16Array;
    const all = ledger.alloc('comm', 'bf16', coll.world * Q) as Uint16Array;
    try {
      this.values.quantize(mine, f, packed, this.lost);
      const sent = coll.allGather(packed, all, `${label} (int8)`);
      await this.compute.quantize?.(S, 2 * Q); // a modeled device's kernel time (issued after the collective)
      await sent;
      for (let r = 0; r < coll.world; r++) this.values.dequantize(all.subarray(r * Q, (r + 1) * Q), f, out.subarray(r * S, (r + 1) * S));
      await this.compute.quantize?.(coll.world * S, coll.world * 2 * Q);
    } finally {
      ledger.free(packed);
      ledger.free(all);
    }
  }
}

/** ZeRO++ itself, side by side with ZeRO-3 in a run: all three components (the rank's context says so). */
export class ZeroPlusPlus extends ZeroPP {
  override readonly name: SchemeName = 'zeropp';
}
