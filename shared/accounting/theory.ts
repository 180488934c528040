// What the schemes should cost, from the seed's accounting: bytes per band and bytes sent per step.
// Everything is computed over the padded layout so it can be compared with measured counters exactly.
import { bytesPerElement, type WireDtype } from '../tensor/dtype.js';
import type { LayoutSizes } from '../training/layout.js';
import type { SchemeFlags } from '../training/schemes/table.js';
import { quantizedElems } from '../tensor/quantize.js';
import { offloadBands, type OffloadTheory } from './offload-theory.js';

const OPTIMIZER_BYTES = { master: 4, m: 4, v: 4 } as const;

/** How a step is scheduled: ZeRO-3's gathers ahead, sharded gradients' reductions behind, and how many
 *  micro-batches make one optimizer step (--accumulate; default 1). */
export interface Overlap {
  gatherAhead: number;
  reduceBehind: number;
  accumulate?: number;
}

/** ZeRO++'s components on a ZeRO-3 run, with the host's ranks G (schemes/zeropp.ts). */
export interface ZeroPPTheory {
  qwz: boolean;
  hpz: boolean;
  qgz: boolean;
  block: number;
  G: number;
}
const NO_OVERLAP: Overlap = { gatherAhead: 0, reduceBehind: 0 };

/** The fp32 gradient accumulator --accumulate K > 1 keeps, elements: DP and ZeRO-1 sum their whole
 *  gradients locally (DDP's no_sync), ZeRO-2/3 sum the shard every micro-batch's reduce-scatter brings. */
function accumulatorElements(f: SchemeFlags, s: LayoutSizes, accumulate = 1): number {
  if (accumulate <= 1) return 0;
  return f.shardGradients ? s.shardTotal : s.paddedTotal;
}

export interface MemoryTheory {
  bands: { params16: number; frozen16: number; kept16: number; secondary: number; grads: number; master: number; m: number; v: number; accum: number };
  host: Record<string, number>; // offload: the model states the host holds (offload-theory.ts); empty without
  hostTotal: number;
  resident: number; // between steps
  transient: number; // what the worst moment inside a step adds
  transientBand: 'gathered' | 'bucket' | null;
  peak: number;
}

export function memoryTheory(
  f: SchemeFlags,
  s: LayoutSizes,
  dtype: WireDtype,
  overlap: Overlap = NO_OVERLAP,
  zpp?: ZeroPPTheory,
  offload?: OffloadTheory,
): MemoryTheory {
  const b = bytesPerElement(dtype);
  const n = (sharded: boolean) => (sharded ? s.shardTotal : s.paddedTotal);
  const frozen = s.frozen;
  const bands = {
    params16: n(f.shardParameters) * b,
    // frozen parameters: their 16-bit copy alone, whole or sharded as the working copy is
    frozen16: (frozen ? (f.shardParameters ? frozen.shardTotal : frozen.paddedTotal) : 0) * b,
    // persisted tensors (a persistence threshold): kept whole on every rank
    kept16: (s.persisted?.kept ?? 0) * b,
    // hpZ: every unit as gathered, partitioned over the host's G ranks
    secondary: zpp?.hpz ? (s.paddedTotal / zpp.G) * b : 0,
    grads: n(f.shardGradients) * b,
    master: n(f.shardOptimizer) * OPTIMIZER_BYTES.master,
    m: n(f.shardOptimizer) * OPTIMIZER_BYTES.m,
    v: n(f.shardOptimizer) * OPTIMIZER_BYTES.v,
    accum: accumulatorElements(f, s, overlap.accumulate) * 4,
  };
  const host: Record<string, number> = offload ? offloadBands(bands, f, s, offload) : {};
  const hostTotal = Object.values(host).reduce((t, x) => t + x, 0);
  const resident = bands.params16 + bands.frozen16 + bands.kept16 + bands.secondary + bands.grads + bands.master + bands.m + bands.v + bands.accum;
  // ZeRO-3 holds one gathered unit while it computes (released before the unit's gradient is bucketed),
  // plus the `gatherAhead` units gathered ahead of it: the worst window of consecutive units.
  // ZeRO-2 holds one unit's full gradient until its reduce-scatter ends. DP and ZeRO-1 never hold more.
  const transientBand = f.shardParameters ? 'gathered' : f.shardGradients ? 'bucket' : null;
  const transient = transientBand ? worstTransient(unitsOf(s), f.shardParameters, overlap, lentTo(s)) * b : 0;
  return { bands, host, hostTotal, resident, transient, transientBand, peak: resident + transient };
}

/** Per unit in forward order: what one gather of it holds (both halves, padded), its gradient bucket (the
 *  trainable half), and whether the backward pass reaches it. */
interface UnitSizes {
  gathered: number;
  bucket: number;
  backward: boolean;
}

/** Per unit: what else it holds gathered while it computes (a tied head: its lending unit, both halves). */
function lentTo(s: LayoutSizes): number[] {
  const out = s.unitPadded.map(() => 0);
  const t = s.tied;
  if (t && t.lender !== t.borrower) out[t.borrower] = unitsOf(s)[t.lender].gathered;
  return out;
}

function unitsOf(s: LayoutSizes): UnitSizes[] {
  return s.unitPadded.map((p, i) => ({ gathered: p + (s.frozen?.unitPadded[i] ?? 0), bucket: p, backward: s.frozen?.backwardUnits[i] ?? true }));
}

/**
 * The most elements a step holds beyond the resident bands, following the schedule in base.ts:
 * forward, a unit's gather plus the `gatherAhead` gathers started ahead of it; backward (from the last unit
 * down to the first it reaches), the same, and then the unit's gradient bucket, of which up to
 * `reduceBehind` stay in flight behind the next units (a unit with nothing trainable starts none; assumed to
 * finish as late as allowed, so with either this is an upper bound; without, exact).
 */
function worstTransient(units: UnitSizes[], gathers: boolean, { gatherAhead, reduceBehind }: Overlap, lent: number[]): number {
  let worst = 0;
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  const gathered = units.map((u) => u.gathered);
  const also = (i: number) => (gathers ? lent[i] : 0); // a tied head's lending unit, gathered for it
  if (gathers) for (let i = 0; i < units.length; i++) worst = Math.max(worst, sum(gathered.slice(i, i + gatherAhead + 1)) + also(i));
  const back = units
    .map((u, i) => ({ ...u, i }))
    .filter((u) => u.backward)
    .reverse();
  const buckets: number[] = [];
  for (let i = 0; i < back.length; i++) {
    const ahead = gathers ? back.slice(i, i + gatherAhead + 1).map((u) => u.gathered) : [];
    worst = Math.max(worst, sum(ahead) + sum(buckets) + also(back[i].i)); // computing unit i, its successors gathered
    if (back[i].bucket > 0) buckets.push(back[i].bucket);
    worst = Math.max(worst, sum(ahead.slice(1)) + sum(buckets)); // unit i released, its bucket out
    while (buckets.length > reduceBehind) buckets.shift();
  }
  return worst;
}

/** qwZ's staging for one gather (this rank's quantized shard and every rank's), of the largest unit. */
function qwzStaging(s: LayoutSizes, zpp?: ZeroPPTheory): number {
  if (!zpp?.qwz) return 0;
  return (s.world + 1) * 2 * quantizedElems(s.maxUnitPadded / s.world, { bits: 8, block: zpp.block });
}

/** Bytes of WebAssembly heap a scheme's rank needs so that every band it allocates lives there (where the
 *  kernels work on it in place): the model states at their peak, the fp32 compute scratch (a unit's
 *  gradient; the gradient Adam reads) and room for the collectives' few staging copies. */
export function heapBytes(
  f: SchemeFlags,
  s: LayoutSizes,
  dtype: WireDtype,
  overlap: Overlap = NO_OVERLAP,
  zpp?: ZeroPPTheory,
  offload?: OffloadTheory,
): number {
  const adamGradient = (f.shardOptimizer ? s.shardTotal : s.paddedTotal) * 4;
  const shardScratch = (overlap.accumulate ?? 1) > 1 ? s.maxUnitPadded * 4 : 0; // a reduced shard widened before it is summed
  const frozenLoad = Math.max(0, ...(s.frozen?.unitPadded ?? [])) * 4; // setup: one frozen half in fp32, rounded into its band
  // persisted tensors: each gather in flight packs the unit's gathered elements (at most the unit) in staging
  const tiedScratch = s.tied ? s.tied.scratch * (bytesPerElement(dtype) + 4) + s.tied.table * 4 : 0; // schemes/tied.ts's three buffers
  const persistStaging = s.persisted ? (overlap.gatherAhead + 1) * Math.max(...unitsOf(s).map((u) => u.gathered)) * bytesPerElement(dtype) : 0;
  const mem = memoryTheory(f, s, dtype, overlap, zpp, offload);
  return (
    mem.peak +
    mem.hostTotal + // the host's bands live in the same heap here
    qwzStaging(s, zpp) +
    s.maxUnitPadded * 4 +
    adamGradient +
    s.maxUnitPadded * bytesPerElement(dtype) +
    shardScratch +
    frozenLoad +
    persistStaging +
    tiedScratch +
    (1 << 20)
  );
}

/** Payload bytes one rank sends per optimizer step: DP, ZeRO-1/2 2(N-1)/N * P * b; ZeRO-3 3(N-1)/N * P * b.
 *  With K micro-batches, DP and ZeRO-1 still reduce once; ZeRO-2 reduce-scatters every micro-batch (K+1
 *  passes with the parameters' all-gather); ZeRO-3 gathers twice and reduce-scatters every micro-batch (3K;
 *  a block gathered again after its recompute, a third time).
 *  P counts what trains; frozen parameters add only ZeRO-3's gathers (trafficParts). */
export function trafficTheory(f: SchemeFlags, s: LayoutSizes, dtype: WireDtype, accumulate = 1, linkScale = 1, zpp?: ZeroPPTheory): number {
  const t = trafficParts(f, s, dtype, accumulate, linkScale, zpp);
  return t.trainable + t.frozen;
}

/** The bytes of trafficTheory split: the frozen parameters' gathers (ZeRO-3 and the hybrid gather them for the
 *  forward pass of every micro-batch and for its backward pass where it reaches them; the others hold them
 *  whole and send none) and everything on the trainable parameters. */
export function trafficParts(
  f: SchemeFlags,
  s: LayoutSizes,
  dtype: WireDtype,
  accumulate = 1,
  linkScale = 1,
  zpp?: ZeroPPTheory,
  rank?: number,
): { trainable: number; frozen: number; host: number; cross: number } {
  if (zpp && f.shardParameters) return { ...zeroPPTraffic(s, dtype, accumulate, linkScale, zpp), frozen: 0 };
  const b = bytesPerElement(dtype);
  const K = accumulate;
  const g = gathers(s, linkScale, rank);
  if (!f.shardParameters)
    return { trainable: (f.shardGradients ? K + 1 : 2) * s.unitPadded.reduce((t, p) => t + g.whole(p), 0) * b, frozen: 0, host: 0, cross: 0 };
  let [trainable, frozen] = [0, 0];
  s.unitPadded.forEach((p, i) => {
    const again = s.regathered?.[i] ? 1 : 0; // a block gathered again for its backward pass after its recompute
    trainable += K * ((2 + again) * g.trainable(i) + g.whole(p)) + g.refresh(i); // forward and backward gathers, the reduce-scatter
    frozen += K * g.frozen(i) * (s.frozen?.backwardUnits[i] ? 2 + again : 1); // the backward pass gathers only the units it reaches
  });
  const t = s.tied;
  if (t && t.lender !== t.borrower) {
    // a tied head gathers the embeddings' unit again for its forward and its backward pass (schemes/tied.ts)
    trainable += 2 * K * g.trainable(t.lender);
    frozen += 2 * K * g.frozen(t.lender);
  }
  return { trainable: trainable * b, frozen: frozen * b, host: 0, cross: 0 };
}

/** Elements one rank sends per gather of each unit's halves: a ring's (N-1) segments of the padded half, or,
 *  where tensors are persisted (persisted-layout.ts), every shard's gathered elements but the next rank's (an
 *  all-gather of unequal segments, no padding sent; `rank` absent: the mean over the ranks); and, once a step,
 *  the persisted elements' all-gather. With --link-scale K each segment carries 1/K, rounded up. */
function gathers(s: LayoutSizes, linkScale: number, rank?: number) {
  const N = s.world;
  const seg = (n: number) => Math.ceil(n / linkScale);
  const whole = (padded: number) => (N - 1) * seg(padded / N);
  const uneven = (counts: number[]) => {
    const all = counts.reduce((t, c) => t + seg(c), 0);
    return rank === undefined ? ((N - 1) * all) / N : all - seg(counts[(rank + 1) % N]);
  };
  const p = s.persisted?.units;
  return {
    whole,
    trainable: (i: number) => (p?.[i].trainable ? uneven(p[i].trainable) : whole(s.unitPadded[i])),
    frozen: (i: number) => (!s.frozen?.unitPadded[i] ? 0 : p?.[i].frozen ? uneven(p[i].frozen) : whole(s.frozen.unitPadded[i])),
    refresh: (i: number) => (p?.[i].keptPerRank ? uneven(p[i].keptPerRank) : 0),
  };
}

/** ZeRO-3's bytes with ZeRO++'s components, per micro-batch: the forward gather (qwZ: each shard of S values as
 *  quantizedElems 16-bit units), the backward gather (hpZ: on the host's ring of G, each rank's M·S values
 *  16-bit; else as the forward; a block gathered again after its recompute, under --recompute-regather, twice),
 *  the gradients (qgZ: two all-to-alls of int4 blocks, G-1 parts of M·S values within the host and M-1 parts of
 *  S across; else the 16-bit reduce-scatter). `host`: the part on rings within the host, `cross`: on qgZ's rings
 *  across hosts; the rest is on the run's ring. */
function zeroPPTraffic(s: LayoutSizes, dtype: WireDtype, K: number, linkScale: number, z: ZeroPPTheory): { trainable: number; host: number; cross: number } {
  const b = bytesPerElement(dtype);
  const N = s.world;
  const M = N / z.G;
  const seg = (elems: number) => Math.ceil(elems / linkScale);
  const q8 = (n: number) => quantizedElems(n, { bits: 8, block: z.block });
  const q4 = (n: number) => quantizedElems(n, { bits: 4, block: z.block });
  const sum = (f: (S: number) => number, units = s.unitPadded) => units.reduce((t, p) => t + f(p / N), 0);
  // the gathers: every unit's, and a tied head's embeddings unit's again (schemes/tied.ts)
  const t = s.tied;
  const gathered = t && t.lender !== t.borrower ? [...s.unitPadded, s.unitPadded[t.lender]] : s.unitPadded;
  // a block gathered again for its backward pass after its recompute (--recompute-regather) gathers twice there,
  // both times from hpZ's host copy when there is one (zero3-plus.ts)
  const again = s.unitPadded.filter((_, i) => s.regathered?.[i]);
  const gather = (S: number) => (z.qwz ? 2 * (N - 1) * seg(q8(S)) : b * (N - 1) * seg(S));
  const forward = sum(gather, gathered);
  const backward = z.hpz ? 0 : forward + sum(gather, again);
  const secondary = (S: number) => b * (z.G - 1) * seg(M * S);
  const hpzHost = z.hpz ? sum(secondary, gathered) + sum(secondary, again) : 0;
  const reduce = z.qgz ? 0 : sum((S) => b * (N - 1) * seg(S));
  const qgzHost = z.qgz ? sum((S) => 2 * (z.G - 1) * seg(q4(M * S))) : 0;
  const qgzCross = z.qgz ? sum((S) => 2 * (M - 1) * seg(q4(S))) : 0;
  const host = K * (hpzHost + qgzHost);
  const cross = K * qgzCross;
  return { trainable: K * (forward + backward + reduce) + host + cross, host, cross };
}
/** The hybrid's bytes across groups, per rank per optimizer step: each unit's reduced shard (`s` is laid out
 *  over the shard group) all-reduced over the M groups every micro-batch, 2(M-1)/M of it, padded (as every
 *  collective pads) to a multiple of M. */
export function crossGroupTraffic(s: LayoutSizes, groups: number, dtype: WireDtype, accumulate = 1, linkScale = 1): number {
  const M = groups;
  const segments = s.unitPadded.reduce((t, p) => t + Math.ceil(Math.ceil(p / s.world / M) / linkScale), 0);
  return 2 * (M - 1) * segments * bytesPerElement(dtype) * accumulate;
}

/** Sizes for a model of `params` parameters in one unit, without padding (for `plan`). */
export function bareSizes(params: number, world: number): LayoutSizes {
  return { params, paddedTotal: params, shardTotal: params / world, maxUnitPadded: params, unitPadded: [params], world };
}
