// ZeRO++'s qgZ: a unit's gradient reduce-scattered as two all-to-alls of int4 blocks instead of a ring of
// 16-bit hops (which would quantize again at every hop). Rank r = h·G + g (host h of M, place g of G); slice j
// of the unit (S values) ends on rank j.
//   1. within the host: to the host's rank at place q, the slices of every host's rank at place q (M·S values),
//      quantized; each rank sums what its G-1 host peers sent (dequantized) with its own: the host's partial
//      sums of the M slices of its place;
//   2. across hosts, among the ranks at the same place: to host h', the partial sum of its slice (S values),
//      quantized; each rank sums the M-1 it receives with its own host's: its slice, reduced over every rank.
// Only step 2 leaves the host: (M-1)/M·Ψ/G values per rank, at 4 bits. It plugs into the gradients' reduction
// (Gradients.reduceShard) through zero3-plus.ts.
import { allToAll } from '../../../collectives/all-to-all.js';
import type { Collectives } from '../../../collectives/collectives.js';
import { quantizedElems, type QuantFormat } from '../../../tensor/quantize.js';
import type { Elems } from '../../../tensor/dtype.js';
import type { MemoryLedger } from '../../../tensor/memory-ledger.js';
import { noQuantError, type QuantError, type Values } from '../../values.js';

export interface QgzContext {
  values: Values;
  ledger: MemoryLedger;
  block: number;
  group: readonly Collectives[]; // stride rings over the host's G ranks
  cross: readonly Collectives[]; // stride rings over the M ranks at this rank's place
  lost: QuantError; // what quantizing lost, added to
  device?: (values: number, codeBytes: number) => Promise<void>; // a modeled device's time to (de)quantize, on its reduce stream
}

/** Staging buffers in the ledger's comm band, freed together. */
class Staging {
  private readonly held: Elems[] = [];
  constructor(private readonly ledger: MemoryLedger) {}
  f32(n: number): Float32Array {
    const x = this.ledger.allocF32('comm', n);
    this.held.push(x);
    return x;
  }
  u16(n: number): Uint16Array {
    const x = this.ledger.alloc('comm', 'bf16', n) as Uint16Array;
    this.held.push(x);
    return x;
  }
  free(): void {
    for (const x of this.held) this.ledger.free(x);
  }
}

/** One all-to-all of int4 blocks among K ranks (this one at `me`): `part(k)` (n values, fp32) quantized to
 *  rank k, what each other rank sent dequantized and added into `acc(k)`'s sum, `own` (n) plus all of them. */
async function exchange(
  q: QgzContext,
  st: Staging,
  rings: readonly Collectives[],
  me: number,
  n: number,
  part: (k: number) => Float32Array,
  own: Float32Array,
  label: string,
): Promise<void> {
  const K = rings.length + 1;
  const f: QuantFormat = { bits: 4, block: q.block };
  const Q = quantizedElems(n, f);
  // One staging block each way, a Q-unit view per peer made when asked for: a 128-host qgZ would otherwise take
  // 254 ledger entries per exchange (at 1,024 simulated ranks the ledger and the collector were about a third of
  // the run), and a simulated rank, which has no values, asks for none.
  const [outAll, gotAll] = [st.u16((K - 1) * Q), st.u16((K - 1) * Q)];
  const view = (all: Uint16Array) => (k: number) => (k === me ? null : all.subarray((k < me ? k : k - 1) * Q, (k < me ? k + 1 : k) * Q));
  const [out, got] = [view(outAll), view(gotAll)];
  q.values.quantizeEach(K, part, out, f, q.lost);
  await q.device?.((K - 1) * n, 2 * (K - 1) * Q); // a modeled device quantizing before it sends, and dequantizing after
  await allToAll(rings, me, { send: (to) => out(to)!, into: (from) => got(from)!, each: Q }, label);
  await q.device?.((K - 1) * n, 2 * (K - 1) * Q);
  q.values.dequantizeAddEach(K, got, f, st.f32(n), own);
}

/** `bucket` (N·S values, the working dtype) reduced over every rank; this rank's slice into `owned` (S). */
async function qgzReduceScatter(bucket: Elems, owned: Elems, q: QgzContext, label: string): Promise<void> {
  const [G, M] = [q.group.length + 1, q.cross.length + 1];
  const g = G > 1 ? q.group[0].rank : 0;
  const h = M > 1 ? q.cross[0].rank : 0;
  const S = owned.length;
  const st = new Staging(q.ledger);
  try {
    // 1. within the host: place p's slices of every host (M·S values), fp32
    const part = st.f32(M * S);
    const place = (p: number) => q.values.toF32Strided(bucket, p, G, M, part);
    const acc = st.f32(M * S);
    acc.set(place(g));
    await exchange(q, st, q.group, g, M * S, place, acc, `${label} qgZ host`);
    // 2. across hosts: the host's partial sum of each host's slice at this place
    const mine = acc.subarray(h * S, (h + 1) * S);
    await exchange(q, st, q.cross, h, S, (k) => acc.subarray(k * S, (k + 1) * S), mine, `${label} qgZ across`);
    q.values.fromF32(mine, owned);
  } finally {
    st.free();
  }
}

/** qgZ as the gradients' reduce-scatter (Gradients.reduceShard), and what its quantization lost since the last
 *  take. */
export class QuantizedGradients {
  private lost: QuantError;
  constructor(private readonly q: Omit<QgzContext, 'lost'>) {
    this.lost = noQuantError();
  }

  readonly reduceShard = (bucket: Elems, owned: Elems, label: string): Promise<void> => qgzReduceScatter(bucket, owned, { ...this.q, lost: this.lost }, label);

  takeLost(): QuantError {
    const e = this.lost;
    this.lost = noQuantError();
    return e;
  }
}
