// DeepSpeed's stage3_param_persistence_threshold, laid over a ShardLayout: every tensor of at most `threshold`
// elements is persisted, kept whole on every rank and never gathered (its gradient is reduce-scattered and its
// master updated like any other; after the update the ranks all-gather its new 16-bit values once, as
// DeepSpeed's _post_step does). Here: where the persisted tensors lie in each unit's two halves, how many
// elements of each rank's shard are gathered and how many persisted, and where each half's persisted values
// sit in the resident band (their order in the model, so a rank-ordered gather of them is that band itself).
import type { Half, PersistedSizes, ShardLayout, Unit } from './layout.js';
import type { ModelGroup } from './model-spec.js';

/** A run of a half's unpadded elements, persisted or gathered. */
interface Run {
  at: number;
  n: number;
  kept: boolean;
}

/** One half of one unit with persisted tensors in it. */
export interface PersistedHalf {
  runs: Run[]; // covering [0, size), in order
  kept: number; // persisted elements
  keptOffset: number; // where they start in the resident band
  gathered: number[]; // per rank: the shard's elements that are gathered (its padding is not sent)
  keptPerRank: number[]; // per rank: the shard's persisted elements
  /** Where each persisted run's values start in the model's flat vector (for the initial load). */
  modelAt: number[];
}

interface PersistedUnit {
  trainable: PersistedHalf | null; // null: nothing persisted in it (gathered whole, as without a threshold)
  frozen: PersistedHalf | null;
}

/** The persisted tensors of a layout: per unit, and the resident band's size. */
export interface PersistedLayout {
  threshold: number;
  units: PersistedUnit[];
  keptTotal: number;
}

/** The persisted ranges of one half: [position in the half, length, position in the model]. */
type Ranges = [number, number, number][];

function tensorRanges(u: Unit, threshold: number, layers: readonly ModelGroup[]): { trainable: Ranges; frozen: Ranges } {
  const out = { trainable: [] as Ranges, frozen: [] as Ranges };
  for (const piece of u.pieces) {
    const g = layers[piece.layer.index];
    for (const t of g.tensors) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      if (n > threshold) continue;
      const rel = t.offset - g.offset;
      if (rel < g.frozen) out.frozen.push([piece.frozenAt + rel, n, t.offset]);
      else out.trainable.push([piece.trainAt + rel - g.frozen, n, t.offset]);
    }
  }
  return out;
}

function persistedHalf(h: Half, ranges: Ranges, world: number, keptOffset: number): PersistedHalf | null {
  if (!ranges.length || !h.size) return null;
  ranges.sort((a, b) => a[0] - b[0]);
  const runs: Run[] = [];
  let at = 0;
  for (const [from, n] of ranges) {
    if (from > at) runs.push({ at, n: from - at, kept: false });
    runs.push({ at: from, n, kept: true });
    at = from + n;
  }
  if (at < h.size) runs.push({ at, n: h.size - at, kept: false });
  const keptIn = (lo: number, hi: number) => ranges.reduce((t, [from, n]) => t + Math.max(0, Math.min(hi, from + n) - Math.max(lo, from)), 0);
  const keptPerRank = Array.from({ length: world }, (_, r) => keptIn(r * h.shard, (r + 1) * h.shard));
  const real = (r: number) => Math.max(0, Math.min(h.size, (r + 1) * h.shard) - r * h.shard); // the shard's elements, padding aside
  const kept = keptPerRank.reduce((a, b) => a + b, 0);
  return { runs, kept, keptOffset, gathered: keptPerRank.map((k, r) => real(r) - k), keptPerRank, modelAt: ranges.map((x) => x[2]) };
}

/** The persisted tensors of `layout` at `threshold` elements (DeepSpeed's: numel <= threshold). */
export function persistedLayout(layout: ShardLayout, threshold: number): PersistedLayout {
  let keptTotal = 0;
  const units = layout.units.map((u) => {
    const r = tensorRanges(u, threshold, layout.spec.layers);
    const trainable = persistedHalf(u, r.trainable, layout.world, keptTotal);
    keptTotal += trainable?.kept ?? 0;
    const frozen = persistedHalf(u.frozen, r.frozen, layout.world, keptTotal);
    keptTotal += frozen?.kept ?? 0;
    return { trainable, frozen };
  });
  return { threshold, units, keptTotal };
}

/** The part of each run that lies in [lo, hi) of the half, with where it starts in the half. */
export function runsIn(p: PersistedHalf, lo: number, hi: number, kept: boolean): { at: number; n: number }[] {
  const out: { at: number; n: number }[] = [];
  for (const r of p.runs) {
    if (r.kept !== kept) continue;
    const [a, b] = [Math.max(lo, r.at), Math.min(hi, r.at + r.n)];
    if (b > a) out.push({ at: a, n: b - a });
  }
  return out;
}

/** The sizes the theory needs (layout.ts's PersistedSizes). */
export function persistedSizes(p: PersistedLayout): PersistedSizes {
  return {
    kept: p.keptTotal,
    units: p.units.map((u) => ({
      trainable: u.trainable?.gathered ?? null,
      frozen: u.frozen?.gathered ?? null,
      keptPerRank: u.trainable?.keptPerRank ?? null,
    })),
  };
}
