// The run options of the command line turned into a run config: each option parsed and checked once, errors
// naming the option. The schema that checks the result is shared/control/run-config.ts.
import * as v from 'valibot';
import {
  ConfigError,
  DEFAULT_BUCKET_BYTES,
  modeledDevice,
  RunConfigSchema,
  type ARCHS,
  type RunConfig,
  ALL_SCHEMES,
  type SchemeName,
} from '../shared/control/run-config.js';
import { issuePath, issueText } from '../shared/control/schema.js';
import { NAMED_SHAPES } from '../shared/training/named-shapes.js';
import { llamaShapeProblem } from '../shared/training/llama.js';

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

/** Our data's token ids are 16-bit: a larger vocabulary needs modeled compute, which has no data. */
const MAX_DATA_VOCAB = 65536;

/** --model llama:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB]: each field checked, named in the error. */
function parseLlama(text: string, fields: string): { arch: 'llama'; model: number[] } {
  const n = fields.split(',').map((s) => Number(s.trim()));
  if ((n.length !== 6 && n.length !== 7) || n.some((x) => !Number.isInteger(x) || x < 1))
    throw new ConfigError(`--model: "${text}" must be llama:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB] with positive integers, e.g. llama:2,64,4,2,172,32`);
  const [layers, dim, heads, kvHeads, ff, seq, vocab = GPT_DEFAULT_VOCAB] = n;
  const problem = llamaShapeProblem({ layers, dim, heads, kvHeads, ff, seq, vocab });
  if (problem) throw new ConfigError(`--model: "${text}": ${problem}`);
  return { arch: 'llama', model: [layers, dim, heads, kvHeads, ff, seq, vocab] };
}

/** --model: MLP widths ("64,256,256,10"), a GPT shape ("gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB]") or a named shape. */
export function parseModel(text: string): { arch: (typeof ARCHS)[number]; model: number[] } {
  const named = NAMED_SHAPES[String(text).trim().toLowerCase()];
  if (named) return { arch: 'gpt', model: [...named] };
  const llama = /^llama:(.*)$/i.exec(String(text).trim());
  if (llama) return parseLlama(text, llama[1]);
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
  const modeled = modeledDevice({ compute: String(o.compute) });
  const vocab = arch === 'mlp' ? 0 : model[model.length - 1];
  if (vocab > MAX_DATA_VOCAB && !modeled)
    throw new ConfigError(`--model: vocabulary ${vocab} is more than ${MAX_DATA_VOCAB}: train it with --compute model:PRESET (no data, modeled compute)`);
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
