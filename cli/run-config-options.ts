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
import { llamaShapeProblem, RMS_EPS, ROPE_THETA } from '../shared/training/llama.js';
import { AdaptationError } from '../shared/training/adapters.js';
import { parseZeroPP } from './zeropp-options.js';
import { modelSpec } from '../shared/training/model.js';

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
  qwz?: boolean; // ZeRO++'s components on zero3 (cli/zeropp-options.ts)
  hpz?: boolean;
  qgz?: boolean;
  quantBlock?: number;
  lora?: string; // R[,ALPHA]
  loraTargets?: string; // a comma list of module names
  freeze?: string; // a comma list of group names
  ropeTheta?: number; // llama: the rotary base
  rmsEps?: number; // llama: RMSNorm's epsilon
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

/** Where a decoder's vocabulary sits in its numbers (an MLP has none). */
const VOCAB_AT: Partial<Record<(typeof ARCHS)[number], number>> = { gpt: 4, llama: 6 };

/** Our data's token ids are 16-bit: a larger vocabulary needs modeled compute, which has no data. */
const MAX_DATA_VOCAB = 65536;

/** --rope-theta and --rms-eps onto a Llama's numbers (where a named shape has not set its own): a whole
 *  base, and eps as its whole reciprocal. Refused for other models. */
function llamaOptions(arch: string, model: number[], o: RunOptions): void {
  const given = [o.ropeTheta !== undefined && '--rope-theta', o.rmsEps !== undefined && '--rms-eps'].filter(Boolean);
  if (arch !== 'llama') {
    if (given.length) throw new ConfigError(`${given.join(' and ')}: only with a Llama model (llama:... or a Llama-family name)`);
    return;
  }
  const theta = o.ropeTheta ?? model[7] ?? ROPE_THETA;
  if (!(Number.isInteger(theta) && theta >= 2)) throw new ConfigError(`--rope-theta: ${o.ropeTheta} must be a whole number of at least 2 (10000, 500000)`);
  const eps = o.rmsEps ?? (model[8] ? 1 / model[8] : RMS_EPS);
  const inverse = Math.round(1 / eps);
  if (!(eps > 0 && Math.abs(inverse * eps - 1) < 1e-9)) throw new ConfigError(`--rms-eps: ${o.rmsEps} must be 1 over a whole number (1e-5, 1e-6)`);
  model.splice(7, 2, theta, inverse);
}

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
  if (named) return { arch: named.arch, model: [...named.model] };
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
      `--model: "${list}" must be at least two positive integer layer widths (e.g. 64,256,256,10), gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB], llama:LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ[,VOCAB] or one of ${Object.keys(NAMED_SHAPES).join(', ')}`,
    );
  }
  return widths;
}

/** PEFT's default lora_alpha. */
const LORA_ALPHA = 8;

/** --lora R[,ALPHA], --lora-targets and --freeze as the config's adaptation (checked against the model by
 *  makeRunConfig), or undefined when every parameter trains. */
export function parseAdapt(o: Pick<RunOptions, 'lora' | 'loraTargets' | 'freeze'>): RunConfig['adapt'] {
  const list = (text: string | undefined) =>
    text === undefined
      ? undefined
      : String(text)
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
  const targets = list(o.loraTargets);
  const freeze = list(o.freeze);
  if (targets && o.lora === undefined) throw new ConfigError('--lora-targets: only with --lora R (the adapters it places)');
  if (freeze && !freeze.length) throw new ConfigError(`--freeze: "${o.freeze}" names no group`);
  if (targets && !targets.length) throw new ConfigError(`--lora-targets: "${o.loraTargets}" names no layer`);
  let lora: NonNullable<RunConfig['adapt']>['lora'];
  if (o.lora !== undefined) {
    const parts = String(o.lora).split(',');
    const [rank, alpha = LORA_ALPHA] = parts.map((x) => Number(x.trim()));
    if (parts.length > 2 || !Number.isInteger(rank) || rank < 1)
      throw new ConfigError(`--lora: "${o.lora}" must be R[,ALPHA] with R a positive integer (e.g. 8 or 8,16)`);
    if (!(Number.isFinite(alpha) && alpha > 0)) throw new ConfigError(`--lora: alpha "${parts[1]}" must be a positive number`);
    lora = { rank, alpha, ...(targets ? { targets } : {}) };
  }
  if (!lora && !freeze) return undefined;
  return { ...(lora ? { lora } : {}), ...(freeze ? { freeze } : {}) };
}

/** The model with its adaptation built once, so a bad rank, target or group is refused naming its option. */
export function checkAdapt(c: Pick<RunConfig, 'arch' | 'model' | 'adapt'>): void {
  if (!c.adapt) return;
  try {
    modelSpec(c);
  } catch (err) {
    if (err instanceof AdaptationError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The run config of these options, checked once by the schema; errors name the option. */
export function makeRunConfig(o: RunOptions): RunConfig {
  const { arch, model } = parseModel(o.model);
  llamaOptions(arch, model, o);
  const modeled = modeledDevice({ compute: String(o.compute) });
  const vocab = model[VOCAB_AT[arch] ?? -1] ?? 0;
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
  const adapt = parseAdapt(o);
  checkAdapt({ arch, model, adapt });
  const schemes = parseSchemes(o.scheme);
  const zeropp = parseZeroPP(o, schemes, adapt);
  const candidate = {
    arch,
    model,
    ...(adapt ? { adapt } : {}),
    ...(zeropp ? { zeropp } : {}),
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
    schemes,
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
