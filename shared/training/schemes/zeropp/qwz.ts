// ZeRO++'s qwZ: a parameter gather that sends each rank's shard block-quantized to int8 (a scale per block;
// tensor/quantize.ts), all-gathered as 16-bit units and dequantized on arrival: about half a 16-bit gather's
// bytes. It plugs into ZeRO-3's gather (zero3-plus.ts).
import type { Collectives } from '../../../collectives/collectives.js';
import type { Elems } from '../../../tensor/dtype.js';
import type { MemoryLedger } from '../../../tensor/memory-ledger.js';
import { quantizedElems, type QuantFormat } from '../../../tensor/quantize.js';
import type { Compute } from '../../compute.js';
import { noQuantError, type QuantError, type Values } from '../../values.js';

export class QuantizedGather {
  /** What quantization lost since the last take, over the shards this rank quantized. */
  private lost: QuantError = noQuantError();
  private readonly format: QuantFormat;

  constructor(
    private readonly coll: Collectives,
    private readonly ledger: MemoryLedger,
    private readonly values: Values,
    private readonly compute: Compute,
    block: number,
  ) {
    this.format = { bits: 8, block };
  }

  /** Every rank's shard of S values quantized, all-gathered as 16-bit units, dequantized into `out`. The
   *  collective is issued before anything is awaited, so gathers started ahead keep every rank's order. */
  async gather(mine: Elems, out: Elems, S: number, label: string): Promise<void> {
    const { coll, ledger, format: f } = this;
    const Q = quantizedElems(S, f);
    const packed = ledger.alloc('comm', 'bf16', Q) as Uint16Array;
    const all = ledger.alloc('comm', 'bf16', coll.world * Q) as Uint16Array;
    try {
      this.values.quantize(mine, f, packed, this.lost);
      const sent = coll.allGather(packed, all, `${label} (int8)`);
      await this.compute.quantize?.(S, 2 * Q); // a modeled device's kernel time (issued after the collective)
      await sent;
      this.values.dequantizeEach(all, f, out.subarray(0, coll.world * S), coll.world);
      await this.compute.quantize?.(coll.world * S, coll.world * 2 * Q);
    } finally {
      ledger.free(packed);
      ledger.free(all);
    }
  }

  takeLost(): QuantError {
    const e = this.lost;
    this.lost = noQuantError();
    return e;
  }
}
