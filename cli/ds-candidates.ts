// The changes of a DeepSpeed config that `plan` weighs (plan-change.ts): each as edits of the user's own JSON,
// one key (or one key and what it implies) at a time, then two at a time from different families. The stage,
// MiCS's shard groups (zerowire's HSDP) and hpZ's partition decide the bytes; accumulation amortizes them over
// more tokens; buckets and overlap change how they queue.
import { isObj } from './config-mapping.js';
import { zeroAsRead } from './deepspeed.js';

/** A value set at a path of the JSON; `undefined` removes the key. */
export interface Edit {
  path: string[];
  value: unknown;
}

export interface Candidate {
  label: string;
  edits: Edit[];
  size: number; // keys changed, as a user counts them
  family: 'shard' | 'accumulate' | 'bucket' | 'overlap';
  /** Command-line flags that would win over what it writes (they must be dropped for the file to say it). */
  flags: string[];
}

/** The job's current numbers the candidates start from. */
export interface JobNow {
  world: number;
  accumulate: number;
  batch: number; // global, rows
  hidden: number | null;
  shardGroup: number; // a host's ranks (0: hosts unknown)
}

/** DeepSpeed's default reduce_bucket_size, elements. */
const DS_REDUCE_BUCKET = 5e8;
/** DeepSpeed's default stage3_prefetch_bucket_size, elements. */
const DS_PREFETCH_BUCKET = 5e7;

/** A deep copy of `json` with `edits` applied. */
export function withEdits(json: Record<string, unknown>, edits: Edit[]): Record<string, unknown> {
  const out = structuredClone(json);
  for (const { path, value } of edits) {
    let at: Record<string, unknown> = out;
    for (const k of path.slice(0, -1)) {
      if (!isObj(at[k])) at[k] = {};
      at = at[k] as Record<string, unknown>;
    }
    const last = path[path.length - 1];
    if (value === undefined) delete at[last];
    else at[last] = value;
  }
  return out;
}

/** zero_optimization as DeepSpeed reads it, and the path of each key under the name the file wrote it. */
interface ZeroRead {
  values: Record<string, unknown>;
  path: (k: string) => string[];
}
const STAGE3_ONLY = ['zero_hpz_partition_size', 'zero_quantized_weights', 'zero_quantized_gradients', 'mics_shard_size'];

/** The stage changes, with what a lower stage cannot keep (ZeRO++'s and MiCS's keys) removed. */
function stages(zr: ZeroRead): Candidate[] {
  const z = zr.values;
  const now = typeof z.stage === 'number' ? z.stage : 0;
  return [0, 1, 2, 3]
    .filter((s) => s !== now)
    .map((s) => ({
      label: `zero_optimization.stage ${now} → ${s}`,
      edits: [{ path: zr.path('stage'), value: s }, ...(s < 3 ? STAGE3_ONLY.filter((k) => k in z).map((k) => ({ path: zr.path(k), value: undefined })) : [])],
      size: 1,
      family: 'shard',
      flags: [],
    }));
}

/** ZeRO-3 within a host's ranks: MiCS's shard groups (zerowire's HSDP), or hpZ's secondary partition. */
function groups(zr: ZeroRead, G: number): Candidate[] {
  const z = zr.values;
  if (G < 2) return [];
  const toStage3 = z.stage === 3 ? [] : [{ path: zr.path('stage'), value: 3 }];
  const also = z.stage === 3 ? '' : ' (and stage 3)';
  return [
    {
      label: `zero_optimization.mics_shard_size ${G}${also}`,
      edits: [...toStage3, { path: zr.path('mics_shard_size'), value: G }],
      size: 1,
      family: 'shard',
      flags: [],
    },
    {
      label: `zero_optimization.zero_hpz_partition_size ${G}${also}`,
      edits: [...toStage3, { path: zr.path('zero_hpz_partition_size'), value: G }],
      size: 1,
      family: 'shard',
      flags: [],
    },
  ];
}

/** More micro-batches a step: at the same micro-batch (a larger global batch), or at the same global batch
 *  (smaller micro-batches: less activation memory). */
function accumulation(j: JobNow): Candidate[] {
  const micro = j.batch / (j.world * j.accumulate);
  const out: Candidate[] = [];
  const edits = (k: number, m: number) => [
    { path: ['gradient_accumulation_steps'], value: k },
    { path: ['train_micro_batch_size_per_gpu'], value: m },
    { path: ['train_batch_size'], value: m * j.world * k },
  ];
  const flags = ['--accumulate', '--batch'];
  for (const f of [2, 4]) {
    const k = j.accumulate * f;
    out.push({
      label: `gradient_accumulation_steps ${j.accumulate} → ${k} (global batch ${j.batch} → ${micro * j.world * k})`,
      edits: edits(k, micro),
      size: 1,
      family: 'accumulate',
      flags,
    });
    if (Number.isInteger(micro / f) && micro / f >= 1)
      out.push({
        label: `gradient_accumulation_steps ${j.accumulate} → ${k} (micro-batch ${micro} → ${micro / f}, global batch kept)`,
        edits: edits(k, micro / f),
        size: 1,
        family: 'accumulate',
        flags,
      });
  }
  return out;
}

/** Larger gradient buckets (fewer, longer collectives), a prefetch where there is none, overlap where it is off. */
function queueing(zr: ZeroRead, j: JobNow): Candidate[] {
  const z = zr.values;
  const out: Candidate[] = [];
  const rb = z.reduce_bucket_size;
  const now = typeof rb === 'number' ? rb : rb === 'auto' && j.hidden !== null ? j.hidden * j.hidden : DS_REDUCE_BUCKET;
  out.push({
    label: `zero_optimization.reduce_bucket_size ${now} → ${now * 4}`,
    edits: [{ path: zr.path('reduce_bucket_size'), value: now * 4 }],
    size: 1,
    family: 'bucket',
    flags: [],
  });
  if (z.stage === 3 && z.stage3_prefetch_bucket_size === 0)
    out.push({
      label: `zero_optimization.stage3_prefetch_bucket_size 0 → ${DS_PREFETCH_BUCKET}`,
      edits: [{ path: zr.path('stage3_prefetch_bucket_size'), value: DS_PREFETCH_BUCKET }],
      size: 1,
      family: 'bucket',
      flags: [],
    });
  if (z.overlap_comm === false)
    out.push({
      label: 'zero_optimization.overlap_comm false → true',
      edits: [{ path: zr.path('overlap_comm'), value: true }],
      size: 1,
      family: 'overlap',
      flags: ['--overlap'],
    });
  return out;
}

/** Every change of one key, then every pair of changes from different families. */
export function jobCandidates(json: Record<string, unknown>, j: JobNow): Candidate[] {
  const { values, written } = zeroAsRead(json.zero_optimization);
  const z: ZeroRead = { values, path: (k) => ['zero_optimization', written[k] ?? k] };
  const singles = [...stages(z), ...groups(z, j.shardGroup), ...accumulation(j), ...queueing(z, j)];
  const pairs: Candidate[] = [];
  singles.forEach((x, i) =>
    singles.slice(i + 1).forEach((y) => {
      if (x.family === y.family) return;
      pairs.push({
        label: `${x.label}; ${y.label}`,
        edits: [...x.edits, ...y.edits],
        size: 2,
        family: x.family,
        flags: [...new Set([...x.flags, ...y.flags])],
      });
    }),
  );
  return [...singles, ...pairs];
}
