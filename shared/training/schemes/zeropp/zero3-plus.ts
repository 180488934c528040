// ZeRO-3 with ZeRO++'s components (Wang et al., 2023), each switchable (--qwz, --hpz, --qgz; --scheme zeropp
// all three), plugged into the two hooks ZeRO-3's step already has: its gather (qwZ: quantized, qwz.ts; hpZ:
// the backward pass's from the host's secondary partition, hpz.ts) and the gradients' reduce-scatter (qgZ:
// two all-to-alls of int4 blocks, qgz.ts). Everything else is ZeRO-3's.
import type { SchemeName } from '../../../control/run-config.js';
import type { Unit } from '../../layout.js';
import type { QuantError } from '../../values.js';
import type { UnitParams } from '../base.js';
import type { SchemeContext } from '../context.js';
import { GATHER_WHY, Zero3, type GatherUse } from '../zero3.js';
import { SecondaryPartition } from './hpz.js';
import { QuantizedGradients } from './qgz.js';
import { QuantizedGather } from './qwz.js';

export class ZeroPP extends Zero3 {
  override readonly name: SchemeName = 'zero3';
  private qwz: QuantizedGather | null = null;
  private hpz: SecondaryPartition | null = null;
  private qgz: QuantizedGradients | null = null;

  override setup(ctx: SchemeContext): this {
    super.setup(ctx);
    const { zeropp: z, coll, ledger, values, compute, dtype, layout } = ctx;
    if (!z) throw new Error("ZeRO++'s components: none given");
    if (z.qwz) this.qwz = new QuantizedGather(coll, ledger, values, compute, z.block);
    if (z.hpz) {
      if (!ctx.host) throw new Error('hpZ needs the ring of the ranks of this host');
      this.hpz = new SecondaryPartition(ctx.host, coll.world, layout, ledger, dtype);
    }
    if (z.qgz) {
      if (!ctx.strides) throw new Error('qgZ needs its stride rings within and across hosts');
      const device = compute.quantizeOnReduceStream?.bind(compute); // beside the compute, as DeepSpeed's
      this.qgz = new QuantizedGradients({ values, ledger, block: z.block, ...ctx.strides, ...(device ? { device } : {}) });
      this.gradients.reduceShard = this.qgz.reduceShard;
    }
    return this;
  }

  /** The quantization error since the last call (a step's), weights' and gradients', and start afresh. */
  override takeQuantError(): { weights?: QuantError; grads?: QuantError } | null {
    const weights = this.qwz?.takeLost();
    const grads = this.qgz?.takeLost();
    return weights || grads ? { ...(weights ? { weights } : {}), ...(grads ? { grads } : {}) } : null;
  }

  protected override async gather(u: Unit, pass: 'forward' | 'backward', use: GatherUse = 'own'): Promise<UnitParams> {
    const { coll, ledger, dtype } = this.ctx;
    const gathered = ledger.alloc('gathered', dtype, u.padded);
    const params = { frozen: this.frozenWorking.subarray(0, 0), trainable: gathered.subarray(0, u.size), gathered };
    const label = `${pass} gather u${u.index}${GATHER_WHY[use]}`;
    // hpZ serves every backward gather, a recompute's and (--recompute-regather) the gather again after it
    // too: DeepSpeed builds a unit's secondary partition when the forward releases it and gathers from it
    // whenever one exists (partition_parameters.py, all_gather_coalesced) until the optimizer step, so only
    // the forward's gather crosses the hosts
    if (this.hpz && pass === 'backward') {
      await this.hpz.gather(u, gathered, label);
      return params;
    }
    const mine = this.working.subarray(u.shardOffset, u.shardOffset + u.shard);
    if (this.qwz) await this.qwz.gather(mine, gathered, u.shard, label);
    else await coll.allGather(mine, gathered, label);
    if (pass === 'forward') this.hpz?.keep(u, gathered);
    return params;
  }
}

/** ZeRO++ itself, side by side with ZeRO-3 in a run: all three components (the rank's context says so). */
export class ZeroPlusPlus extends ZeroPP {
  override readonly name: SchemeName = 'zeropp';
}
