// The run config: one schema that says what a run is. The coordinator builds it from the command line
// (makeRunConfig) and broadcasts it; every rank checks it on arrival with the same schema.
import * as v from 'valibot';
import { WIRE_DTYPES } from '../tensor/dtype.js';
import { finite, int, parse, text } from './schema.js';
import { DeviceSchema } from './device.js';

/** The seed's four schemes, on the run's one ring. */
const PREFLIGHTS = ['off', 'ring', 'all-pairs'] as const;
export const SCHEMES = ['dp', 'zero1', 'zero2', 'zero3'] as const;
/** With the hybrid: ZeRO-3 within a shard group, replicas across groups, over two sub-rings. */
/** With the hybrid (ZeRO-3 within a shard group, replicas across), and ZeRO++ (ZeRO-3 with qwZ, hpZ and qgZ). */
export const ALL_SCHEMES = [...SCHEMES, 'hsdp', 'zeropp'] as const;
export type SchemeName = (typeof ALL_SCHEMES)[number];
export const UNITS = ['layer', 'model'] as const;
export type UnitMode = (typeof UNITS)[number];
const COMPUTE_MODES = ['auto', 'inline', 'thread'] as const;
/** Where a rank computes: here (inline, or on a worker thread), or on a modeled accelerator (shared/whatif). */
export type ComputeMode = 'inline' | 'thread' | `model:${string}`;
const MODELED = /^model:([a-z0-9]+)$/;

/** Largest chunk payload a collective may send; peers refuse bigger WebSocket messages. */
const MAX_CHUNK_BYTES = 64 << 20;

export const DEFAULT_MODEL = '512,1024,512,10'; // 1,055,242 parameters
export const DEFAULT_BUCKET_BYTES = 25 * 2 ** 20; // DDP's bucket_cap_mb

const scheme = v.picklist(ALL_SCHEMES);
const checkpointDir = text(4096);

/** A model's configuration: its arch and its named fields. The fields are the model's own, checked by its
 *  schema in models/registry.ts wherever a spec is built (the CLI once, every rank on arrival). */
export const ModelConfigSchema = v.looseObject({ arch: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,31}$/, 'a model name')) });

/** How a model is fine-tuned (training/adapters.ts's Adaptation): in the run config and a checkpoint's index. */
export const AdaptSchema = v.object({
  lora: v.optional(v.object({ rank: int(1, 65536), alpha: v.pipe(finite, v.gtValue(0)), targets: v.optional(v.array(text(200))) })),
  freeze: v.optional(v.array(text(200))),
});

export const RunConfigSchema = v.object({
  model: ModelConfigSchema, // { arch: 'gpt', layers: 2, dim: 64, heads: 4, seq: 32, vocab: 64 }
  steps: int(1, 1e7),
  batch: int(1, 1e7), // global batch, split evenly over ranks (and over micro-batches)
  accumulate: int(1, 1024), // micro-batches per optimizer step, each batch/(world*accumulate) rows per rank
  lr: v.pipe(finite, v.gtValue(0)),
  beta1: v.pipe(finite, v.minValue(0), v.ltValue(1)),
  beta2: v.pipe(finite, v.minValue(0), v.ltValue(1)),
  eps: v.pipe(finite, v.gtValue(0)),
  seed: int(0, 2 ** 32 - 1),
  samples: int(1, 1e8), // size of the synthetic data set
  wireDtype: v.picklist(WIRE_DTYPES), // of the working copy, the gradients and the wire
  unit: v.picklist(UNITS), // granularity of a gather and of a gradient bucket
  chunkBytes: int(64, MAX_CHUNK_BYTES), // collective chunk size
  timeoutMs: int(1, 1e9), // a collective that waits longer than this fails
  schemes: v.pipe(v.array(scheme), v.minLength(1, 'at least one scheme')), // run back to back, same initial weights and data
  // every scheme at its best (DDP buckets, reduce-scatters behind the backward pass, ZeRO-3 prefetch), or
  // false: each collective awaited as soon as it starts, the "no overlap" baseline
  overlap: v.boolean(),
  // before the schemes: measure every ring link (ring), or every pair of hosts (all-pairs), or nothing
  preflight: v.optional(v.picklist(PREFLIGHTS), 'ring'),
  bucketBytes: int(1024, 1 << 30), // DP and ZeRO-1: gradient bucket cap (DDP's bucket_cap_mb), wire-dtype bytes
  // hsdp: ranks per shard group (0: the ranks of one host; the coordinator resolves it before it assigns)
  shardGroup: int(0, 4096),
  gatherAhead: int(0, 2), // ZeRO-3: unit gathers kept in flight ahead of compute
  // ZeRO-3 and the hybrid: tensors of at most this many elements kept whole on every rank and never gathered
  // (DeepSpeed's stage3_param_persistence_threshold; training/persisted-layout.ts); absent or 0: none
  persist: v.optional(int(0, 2 ** 40)),
  // DeepSpeed's offload (training/schemes/offload.ts): the fp32 masters and Adam's moments in host memory, the
  // optimizer run there; `params`: ZeRO-3's 16-bit shard there too; `dpu`: the update delayed one step (the
  // next step's passes use the weights from before the last update, as ZeRO-Offload's DPU); `hostAdamGparams`:
  // a modeled host's Adam rate, billions of parameters a second per rank (absent: measured on this host)
  offload: v.optional(
    v.object({
      params: v.boolean(),
      dpu: v.boolean(),
      hostAdamGparams: v.optional(v.pipe(finite, v.gtValue(0))),
      hostAdamMeasured: v.optional(text(200)), // how it was measured here, when not given
    }),
  ),
  reduceBehind: int(0, 2), // sharded gradients: unit reduce-scatters left running behind the backward pass
  recompute: v.boolean(), // GPT: activation checkpointing per block
  // ZeRO-3 under recompute: a block gathered for its recompute is released after it and gathered again for its
  // backward pass, as DeepSpeed's ZeRO-3 does (absent: the backward's gather serves both, as FSDP's does)
  recomputeRegather: v.optional(v.boolean()),
  // fine-tuning (training/adapters.ts): LoRA adapters on Linear layers (the base frozen), groups frozen by name
  adapt: v.optional(AdaptSchema),
  // ZeRO++'s components on ZeRO-3 (training/schemes/zeropp.ts): qwZ, its gathers int8 in blocks of `block`;
  // hpZ, a secondary copy partitioned over the host's ranks (shardGroup) and the backward gathers within it;
  // qgZ, the gradients' reduce-scatter as two all-to-alls of int4 blocks (within the host, then across)
  zeropp: v.optional(v.object({ qwz: v.boolean(), hpz: v.boolean(), qgz: v.boolean(), block: int(16, 1 << 24) })),
  // forward/backward on the rank's main thread, or on a worker thread; auto: each rank decides (resolveCompute)
  // model:PRESET: compute takes a modeled accelerator's time and no values exist (--compute model:h200)
  // modeled compute: every collective carries 1/linkScale of its bytes, so each link stands for a faster one
  linkScale: int(1, 1e6),
  // modeled compute: the device's dense peak, and the fraction of it its products reach, instead of the preset's
  tflops: v.optional(v.pipe(finite, v.gtValue(0))),
  // modeled compute on a device read from its datasheet (--device PATH) rather than a preset
  device: v.optional(DeviceSchema),
  mfu: v.optional(v.pipe(finite, v.gtValue(0), v.maxValue(1))),
  compute: v.union([v.picklist(COMPUTE_MODES), v.pipe(v.string(), v.regex(MODELED, 'auto, inline, thread or model:PRESET'))]),
  // threads computing a rank's products; auto: this host's cores over the ranks on this host
  threads: v.union([int(1, 256), v.literal('auto')], 'a positive number of threads or auto'),
  // each rank writes its shards every `every` steps under dir/<scheme>/
  checkpoint: v.optional(v.object({ every: int(1), dir: checkpointDir })),
  // continue a scheme from a complete checkpoint
  // (from: a checkpoint of another scheme or world size, resharded as it is loaded)
  resume: v.optional(
    v.record(
      scheme,
      v.object({
        step: int(1),
        dir: checkpointDir,
        sha256: v.array(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
        headerSha256: v.optional(v.array(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)))), // shards whose header lists block checksums
        // written by another scheme, world size or unit: resharded as it loads
        from: v.optional(v.object({ scheme, world: int(1), unit: v.picklist(UNITS), sharded: v.boolean(), shardGroup: v.optional(int(2)) })),
      }),
    ),
  ),
});

/** Everything a rank needs to know to train; the coordinator broadcasts one of these. */
export type RunConfig = v.InferOutput<typeof RunConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The accelerator preset a run models (--compute model:NAME), or null when it computes for real: the one
 *  place `model:` is read. */
export function modeledDevice(c: Pick<RunConfig, 'compute'>): string | null {
  return MODELED.exec(c.compute)?.[1] ?? null;
}

/** A run config that arrived over the wire. */
export function validateRunConfig(x: unknown): RunConfig {
  return parse(RunConfigSchema, x, 'config');
}

/** Checks that need the world size. */
export function checkWorld(config: RunConfig, world: number): void {
  if (!Number.isInteger(world) || world < 1) throw new ConfigError(`--world: ${world} must be a positive integer`);
  const parts = world * config.accumulate;
  if (config.batch % parts !== 0)
    throw new ConfigError(
      config.accumulate > 1
        ? `--batch ${config.batch} does not divide evenly over --world ${world} ranks x --accumulate ${config.accumulate} micro-batches (each takes batch/(world*accumulate) rows)`
        : `--batch ${config.batch} does not divide evenly over --world ${world} ranks (each rank takes batch/world rows)`,
    );
}
