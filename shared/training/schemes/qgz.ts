// ZeRO++'s qgZ: a unit's gradient reduce-scattered as two all-to-alls of int4 blocks instead of a ring of
// 16-bit hops (which would quantize again at every hop). Rank r = h·G + g (host h of M, place g of G); slice j
// of the unit (S values) ends on rank j.
//   1. within the host: to the host's rank at place q, the slices of every host's rank at place q (M·S values),
//      quantized; each rank sums what its G-1 host peers sent (dequantized) with its own: the host's partial
//      sums of the M slices of its place;
//   2. across hosts, among the ranks at the same place: to host h', the partial sum of its slice (S values),
//      quantized; each rank sums the M-1 it receives with its own host's: its slice, reduced over every rank.
// Only step 2 leaves the host: (M-1)/M·Ψ/G values per rank, at 4 bits.
import { allToAll } from '../../collectives/all-to-all.js';
import type { Collectives } from '../../collectives/collectives.js';
import { quantizedElems, type QuantFormat } from '../../tensor/quantize.js';
import type { Elems } from '../../tensor/dtype.js';
import type { MemoryLedger } from '../../tensor/memory-ledger.js';
import type { QuantError, Values } from '../values.js';

export interface QgzContext {
  values: Values;
  ledger: MemoryLedger;
  block: number;
  group: readonly Collectives[]; // stride rings over the host's G ranks
  cross: readonly Collectives[]; // stride rings over the M ranks at this rank's place
  lost: QuantError; // what quantizing lost, added to
}

/** `bucket` (N·S values, the working dtype) reduced over every rank; this rank's slice into `owned` (S). */
export async function qgzReduceScatter(bucket: Elems, owned: Elems, q: QgzContext, label: string): Promise<void> {
  const G = q.group.length + 1;
  const M = q.cross.length + 1;
  const g = G > 1 ? q.group[0].rank : 0;
  const h = M > 1 ? q.cross[0].rank : 0;
  const S = owned.length;
  const f: QuantFormat = { bits: 4, block: q.block };
  const { values, ledger } = q;
  const temps: Elems[] = [];
  const f32 = (n: number) => (temps.push(ledger.allocF32('comm', n)), temps[temps.length - 1] as Float32Array);
  const u16 = (n: number) => (temps.push(ledger.alloc('comm', 'bf16', n)), temps[temps.length - 1] as Uint16Array);
  try {
    // 1. within the host
    const Q1 = quantizedElems(M * S, f);
    const part = f32(M * S);
    const gatherPlace = (p: number) => {
      for (let k = 0; k < M; k++) values.toF32(bucket.subarray((k * G + p) * S, (k * G + p + 1) * S), part.subarray(k * S, (k + 1) * S));
      return part;
    };
    const out1 = Array.from({ length: G }, (_, p) => (p === g ? null : u16(Q1)));
    const in1 = Array.from({ length: G }, (_, p) => (p === g ? null : u16(Q1)));
    for (let p = 0; p < G; p++) if (p !== g) values.quantize(gatherPlace(p), f, out1[p]!, q.lost);
    await allToAll(
      q.group,
      g,
      (to) => out1[to]!,
      (from) => in1[from]!,
      `${label} qgZ host`,
    );
    const acc = f32(M * S);
    acc.set(gatherPlace(g));
    const back = f32(M * S);
    for (let p = 0; p < G; p++) {
      if (p === g) continue;
      values.dequantize(in1[p]!, f, back);
      values.addF32(acc, back);
    }
    // 2. across hosts
    const Q2 = quantizedElems(S, f);
    const out2 = Array.from({ length: M }, (_, k) => (k === h ? null : u16(Q2)));
    const in2 = Array.from({ length: M }, (_, k) => (k === h ? null : u16(Q2)));
    for (let k = 0; k < M; k++) if (k !== h) values.quantize(acc.subarray(k * S, (k + 1) * S), f, out2[k]!, q.lost);
    await allToAll(
      q.cross,
      h,
      (to) => out2[to]!,
      (from) => in2[from]!,
      `${label} qgZ across`,
    );
    const mine = acc.subarray(h * S, (h + 1) * S);
    const one = back.subarray(0, S);
    for (let k = 0; k < M; k++) {
      if (k === h) continue;
      values.dequantize(in2[k]!, f, one);
      values.addF32(mine, one);
    }
    values.fromF32(mine, owned);
  } finally {
    for (const t of temps) ledger.free(t);
  }
}
