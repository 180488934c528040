// What DeepSpeed's offload should cost a rank (training/schemes/offload.ts): which model states leave the
// device for the host, and the bytes copied between them per optimizer step. ZeRO-Offload: the masters and
// Adam's moments (12 B a parameter of the shard) and the fp32 gradient Adam reads (4 B) are the host's; each
// step the reduced gradient shard goes down (every micro-batch where gradients are sharded and summed on the
// host, once for ZeRO-1) and the updated 16-bit shard comes back. offload_param: ZeRO-3's 16-bit shard is the
// host's too, copied up before each gather instead of after the update.
import { bytesPerElement, type WireDtype } from '../tensor/dtype.js';
import type { HOST_BANDS } from '../tensor/memory-ledger.js';
import type { LayoutSizes } from '../training/layout.js';
import type { SchemeFlags } from '../training/schemes/table.js';

type HostBand = (typeof HOST_BANDS)[number];

export interface OffloadTheory {
  params: boolean;
}

/** The device bands that move to the host (set to 0 in `device`), and the host's bands. */
export function offloadBands(
  device: Record<'params16' | 'frozen16' | 'master' | 'm' | 'v' | 'accum', number>,
  f: SchemeFlags,
  s: LayoutSizes,
  off: OffloadTheory,
): Record<HostBand, number> {
  const params = off.params && f.shardParameters;
  const shard = (f.shardOptimizer ? s.shardTotal : s.paddedTotal) * 4;
  const host: Record<HostBand, number> = {
    'host master': device.master,
    'host m': device.m,
    'host v': device.v,
    'host grads': shard, // the fp32 gradient Adam reads
    'host accum': f.shardGradients ? device.accum : 0, // sharded gradients are summed on the host
    'host params16': params ? device.params16 : 0,
    'host frozen16': params ? device.frozen16 : 0,
  };
  device.master = device.m = device.v = 0;
  if (f.shardGradients) device.accum = 0;
  if (params) device.params16 = device.frozen16 = 0;
  return host;
}

/** Bytes one rank copies per optimizer step: device to host (its reduced gradient shard) and host to device
 *  (its updated 16-bit shard; with offload_param, every gathered unit's shard of both halves instead). */
export function pcieTheory(f: SchemeFlags, s: LayoutSizes, dtype: WireDtype, accumulate: number, off: OffloadTheory): { d2h: number; h2d: number } {
  const b = bytesPerElement(dtype);
  const d2h = (f.shardGradients ? accumulate : 1) * s.shardTotal * b;
  if (!(off.params && f.shardParameters)) return { d2h, h2d: s.shardTotal * b };
  const N = s.world;
  const fz = s.frozen;
  const shards = (i: number) => s.unitPadded[i] / N + (fz?.unitPadded[i] ?? 0) / N;
  let perMicro = 0;
  s.unitPadded.forEach((p, i) => {
    perMicro += shards(i); // the forward gather
    const backward = p > 0 || (fz?.backwardUnits[i] ?? false);
    if (backward) perMicro += shards(i);
  });
  const t = s.tied;
  if (t && t.lender !== t.borrower) perMicro += 2 * shards(t.lender); // a tied head's table, gathered for it
  return { d2h, h2d: accumulate * perMicro * b };
}
