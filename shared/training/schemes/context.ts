// What a scheme is given to train with: its layout, ring, ledger, optimizer settings and schedule.
import type { AdamHyper } from '../adam.js';
import type { Collectives } from '../../collectives/collectives.js';
import type { WireDtype } from '../../tensor/dtype.js';
import type { ShardLayout } from '../layout.js';
import type { MemoryLedger } from '../../tensor/memory-ledger.js';
import type { Compute } from '../compute.js';
import type { Values } from '../values.js';
import type { PcieTally } from './offload.js';

export interface SchemeContext {
  layout: ShardLayout;
  coll: Collectives;
  ledger: MemoryLedger;
  hyper: AdamHyper;
  dtype: WireDtype; // of the working copy, the gradients and the wire
  theta0: Float32Array; // initial parameters, unpadded fp32 (every rank derives the same from the seed)
  values: Values; // conversions and Adam: on real arrays, or a what-if rank's none (rank/assembly.ts chooses)
  gatherAhead?: number; // ZeRO-3: unit gathers kept in flight ahead of the unit being computed (0: none)
  reduceBehind?: number; // sharded gradients: unit reduce-scatters left running behind the backward pass (0: none)
  overlap?: boolean; // false: every reduction is awaited as soon as it starts (the "no overlap" baseline); default true
  bucketBytes?: number; // DP and ZeRO-1: gradient bucket cap (DDP's bucket_cap_mb), bytes of the wire dtype
  accumulate?: number; // micro-batches per optimizer step (default 1)
  compute: Compute; // where forward and backward run: inline, on a thread, or a modeled device
  // hsdp: `coll` and `layout` are the shard group's; `cross` is the ring of the ranks holding the same shard
  // in every group, over which each reduced gradient shard is all-reduced; `ranks` all data-parallel ranks
  cross?: Collectives;
  // ZeRO++'s components (zero3; zeropp.ts): qwZ's quantized gathers, hpZ's secondary partition over the host's
  // ranks, whose ring `host` is (the hybrid's group ring)
  zeropp?: { qwz: boolean; hpz: boolean; qgz: boolean; block: number };
  host?: Collectives;
  // qgZ's all-to-alls: rings of stride 1 .. K-1 over the host's ranks (group) and over the ranks at the same
  // place on every host (cross)
  strides?: { group: Collectives[]; cross: Collectives[] } | null;
  ranks?: number; // ranks whose losses are averaged (default: the layout's world)
  persist?: number; // ZeRO-3: tensors of at most this many elements are kept whole, never gathered (0: none; persisted.ts)
  // ZeRO-3 under recompute, by unit: gathered again for its backward pass after its recompute (DeepSpeed's; zero3.ts)
  regather?: boolean[];
  offload?: { params: boolean; dpu: boolean }; // DeepSpeed's offload (offload.ts)
  pcie?: PcieTally; // where offload's copies between device and host are counted
}
