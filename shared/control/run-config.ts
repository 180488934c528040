// The run config: one schema that says what a run is. The coordinator builds it from the command line
// (makeRunConfig) and broadcasts it; every rank checks it on arrival with the same schema.
import * as v from 'valibot';
import { WIRE_DTYPES } from '../tensor/dtype.js';
import { finite, int, issuePath, issueText, parse, text } from './schema.js';

/** The seed's four schemes, on the run's one ring. */
const PREFLIGHTS = ['off', 'ring', 'all-pairs'] as const;
export const SCHEMES = ['dp', 'zero1', 'zero2', 'zero3'] as const;
/** With the hybrid: ZeRO-3 within a shard group, replicas across groups, over two sub-rings. */
export const ALL_SCHEMES = [...SCHEMES, 'hsdp'] as const;
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

export const ARCHS = ['mlp', 'gpt'] as const;

export const RunConfigSchema = v.object({
  arch: v.picklist(ARCHS), // the model: an MLP, or a GPT-style decoder
  // mlp: layer widths, e.g. [64, 256, 256, 10]; gpt: [layers, dim, heads, seq, vocab]
  model: v.pipe(v.array(int(1)), v.minLength(2, 'at least two numbers')),
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
  reduceBehind: int(0, 2), // sharded gradients: unit reduce-scatters left running behind the backward pass
  recompute: v.boolean(), // GPT: activation checkpointing per block
  // forward/backward on the rank's main thread, or on a worker thread; auto: each rank decides (resolveCompute)
  // model:PRESET: compute takes a modeled accelerator's time and no values exist (--compute model:h200)
  // modeled compute: every collective carries 1/linkScale of its bytes, so each link stands for a faster one
  linkScale: int(1, 1e6),
  // modeled compute: the device's dense peak, and the fraction of it its products reach, instead of the preset's
  tflops: v.optional(v.pipe(finite, v.gtValue(0))),
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

/** The command-line options a run config is made from (yargs has already typed them). */
export interface RunOptions {
  scheme: string; // dp|zero1|zero2|zero3|all, or a comma list
  model: string; // "64,256,256,10", or "gpt:2,64,4,32"
  steps: number;
  batch: number;
  accumulate?: number;
  lr: number;
  seed: number;
  samples: number;
  wireDtype: string;
  unit: string;
  chunkKib: number;
  timeout: number; // seconds
  overlap?: string; // on|off
  preflight?: string; // off|ring|all-pairs
  shardGroup?: number; // hsdp: 0 = by host
  bucketMib?: number;
  prefetch?: number; // both of the two below (the older option, kept as their alias)
  gatherAhead?: number;
  reduceBehind?: number;
  compute: string; // auto|inline|thread|model:PRESET
  linkScale?: number; // with model:PRESET: collectives carry 1/K of their bytes
  tflops?: number; // with model:PRESET: its dense peak instead of the preset's
  mfu?: number; // with model:PRESET: the fraction of the peak its products reach
  threads: string; // a count, or auto
  recompute?: boolean; // GPT: keep each block's output only, recompute its insides in the backward pass
}

/** The option each config field comes from, for error messages. */
const OPTION: Record<string, string> = {
  model: '--model',
  steps: '--steps',
  batch: '--batch',
  accumulate: '--accumulate',
  lr: '--lr',
  seed: '--seed',
  samples: '--samples',
  wireDtype: '--wire-dtype',
  unit: '--unit',
  chunkBytes: '--chunk-kib (in bytes)',
  timeoutMs: '--timeout (in ms)',
  schemes: '--scheme',
  overlap: '--overlap',
  preflight: '--preflight',
  shardGroup: '--shard-group',
  bucketBytes: '--bucket-mib (in bytes)',
  gatherAhead: '--gather-ahead',
  reduceBehind: '--reduce-behind',
  compute: '--compute',
  linkScale: '--link-scale',
  tflops: '--tflops',
  mfu: '--mfu',
  threads: '--threads',
};

function parseSchemes(list: string): SchemeName[] {
  const parts = list
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (parts.length === 1 && parts[0] === 'all') return [...ALL_SCHEMES]; // hsdp only where groups exist (the coordinator decides)
  const bad = parts.filter((p) => !(ALL_SCHEMES as readonly string[]).includes(p));
  if (!parts.length || bad.length) throw new ConfigError(`--scheme: "${list}" is not one of ${ALL_SCHEMES.join('|')}|all (or a comma list)`);
  return [...new Set(parts)] as SchemeName[];
}

const GPT_DEFAULT_VOCAB = 64;

/** Real models' shapes as our GPT block (same width, depth, heads, sequence and vocabulary): [L, D, H, T, V].
 *  A Llama block (SwiGLU, RMSNorm, rotary) has about the same parameters and computes ~25% slower. */
export const NAMED_SHAPES: Record<string, number[]> = {
  'gpt2-xl': [48, 1600, 25, 1024, 50257],
  'llama2-7b': [32, 4096, 32, 4096, 32000],
  'llama3-8b': [32, 4096, 32, 8192, 128256],
  'llama2-13b': [40, 5120, 40, 4096, 32000],
  'llama2-70b': [80, 8192, 64, 4096, 32000],
};

/** Our data's token ids are 16-bit: a larger vocabulary needs modeled compute, which has no data. */
const MAX_DATA_VOCAB = 65536;

/** --model: MLP widths ("64,256,256,10"), a GPT shape ("gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB]") or a named shape. */
export function parseModel(text: string): { arch: (typeof ARCHS)[number]; model: number[] } {
  const named = NAMED_SHAPES[String(text).trim().toLowerCase()];
  if (named) return { arch: 'gpt', model: [...named] };
  const m = /^gpt:(.*)$/i.exec(String(text).trim());
  if (!m) return { arch: 'mlp', model: parseWidths(text) };
  const n = m[1].split(',').map((s) => Number(s.trim()));
  if ((n.length !== 4 && n.length !== 5) || n.some((x) => !Number.isInteger(x) || x < 1))
    throw new ConfigError(`--model: "${text}" must be gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB] with positive integers, e.g. gpt:2,64,4,32`);
  const [layers, dim, heads, seq, vocab = GPT_DEFAULT_VOCAB] = n;
  if (dim % heads !== 0) throw new ConfigError(`--model: "${text}": DIM ${dim} does not divide into ${heads} heads`);
  return { arch: 'gpt', model: [layers, dim, heads, seq, vocab] };
}

export function parseWidths(list: string): number[] {
  const widths = String(list)
    .split(',')
    .map((s) => Number(s.trim()));
  if (widths.length < 2 || widths.some((w) => !Number.isInteger(w) || w < 1)) {
    throw new ConfigError(
      `--model: "${list}" must be at least two positive integer layer widths (e.g. 64,256,256,10), gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB] or one of ${Object.keys(NAMED_SHAPES).join(', ')}`,
    );
  }
  return widths;
}

/** The run config of these options, checked once by the schema; errors name the option. */
export function makeRunConfig(o: RunOptions): RunConfig {
  const { arch, model } = parseModel(o.model);
  const modeled = MODELED.exec(String(o.compute))?.[1];
  if (arch === 'gpt' && model[4] > MAX_DATA_VOCAB && !modeled)
    throw new ConfigError(`--model: vocabulary ${model[4]} is more than ${MAX_DATA_VOCAB}: train it with --compute model:PRESET (no data, modeled compute)`);
  if ((o.linkScale ?? 1) !== 1 && !modeled)
    throw new ConfigError(`--link-scale ${o.linkScale}: only with --compute model:PRESET (a run with values sends all of them)`);
  const deviceOptions = [o.tflops !== undefined && '--tflops', o.mfu !== undefined && '--mfu'].filter(Boolean);
  if (deviceOptions.length && !modeled)
    throw new ConfigError(`${deviceOptions.join(' and ')}: only with --compute model:PRESET (they describe a modeled device)`);
  const overlap = parseOverlap(o);
  // Overlap on: ZeRO-3 gathers one unit ahead and one reduce-scatter runs behind, as FSDP's defaults do.
  const gatherAhead = o.gatherAhead ?? o.prefetch ?? (overlap ? 1 : 0);
  const reduceBehind = o.reduceBehind ?? o.prefetch ?? (overlap ? 1 : 0);
  const candidate = {
    arch,
    model,
    recompute: o.recompute ?? false,
    steps: o.steps,
    batch: o.batch,
    accumulate: o.accumulate ?? 1,
    lr: o.lr,
    beta1: 0.9,
    beta2: 0.999,
    eps: 1e-8,
    seed: o.seed,
    samples: o.samples,
    wireDtype: o.wireDtype,
    unit: o.unit,
    chunkBytes: Math.round(o.chunkKib * 1024),
    timeoutMs: Math.round(o.timeout * 1000),
    schemes: parseSchemes(o.scheme),
    overlap,
    preflight: o.preflight ?? 'ring',
    shardGroup: o.shardGroup ?? 0,
    bucketBytes: Math.round((o.bucketMib ?? DEFAULT_BUCKET_BYTES / 2 ** 20) * 2 ** 20),
    gatherAhead,
    reduceBehind,
    compute: o.compute,
    linkScale: o.linkScale ?? 1,
    ...(o.tflops !== undefined ? { tflops: o.tflops } : {}),
    ...(o.mfu !== undefined ? { mfu: o.mfu } : {}),
    threads: o.threads === 'auto' ? 'auto' : Number(o.threads),
  };
  const r = v.safeParse(RunConfigSchema, candidate, { abortEarly: true });
  if (r.success) return r.output;
  const issue = r.issues[0];
  const field = issuePath(issue).split(/[.[]/)[0];
  const alias = o.prefetch !== undefined && (field === 'gatherAhead' || field === 'reduceBehind') && o[field] === undefined;
  throw new ConfigError(`${alias ? '--prefetch' : (OPTION[field] ?? field)}: ${issueText(issue).replace(/^field "[^"]*": /, '')}`);
}

/** --overlap on|off; off cannot be combined with asking for overlap by name. */
function parseOverlap(o: RunOptions): boolean {
  const text = String(o.overlap ?? 'on').toLowerCase();
  if (text !== 'on' && text !== 'off') throw new ConfigError(`--overlap: "${o.overlap}" must be on or off`);
  const asked = [o.gatherAhead && '--gather-ahead', o.reduceBehind && '--reduce-behind', o.prefetch && '--prefetch'].filter(Boolean);
  if (text === 'off' && asked.length) throw new ConfigError(`--overlap off runs every collective without overlap: drop ${asked.join(', ')}`);
  return text === 'on';
}

/**
 * Where a rank computes. A worker thread leaves the event loop free to move ring frames at any moment, at
 * the price of copies through its staging and a hand-off per layer; it pays only where the host has a spare
 * core for it. Inline, the event loop turns between units (the kernel keeps moving bytes meanwhile). So
 * auto: a thread when there is something to overlap and at least two cores per rank's compute threads on
 * this host, else inline.
 */
export function resolveCompute(
  c: Pick<RunConfig, 'compute' | 'overlap' | 'gatherAhead' | 'reduceBehind'>,
  cores: number,
  busyThreadsOnHost: number,
): ComputeMode {
  if (c.compute !== 'auto') return c.compute as ComputeMode;
  const overlaps = c.overlap || c.gatherAhead > 0 || c.reduceBehind > 0;
  return overlaps && cores >= 2 * busyThreadsOnHost ? 'thread' : 'inline';
}

/** The accelerator preset a run models (--compute model:NAME), or null when it computes for real. */
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
