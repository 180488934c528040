// The run options of the command line turned into a run config: each option parsed and checked once, errors
// naming the option. The schema that checks the result is shared/control/run-config.ts.
import * as v from 'valibot';
import {
  ConfigError,
  DEFAULT_BUCKET_BYTES,
  modeledDevice,
  RunConfigSchema,
  type RunConfig,
  ALL_SCHEMES,
  type SchemeName,
} from '../shared/control/run-config.js';
import { issuePath, issueText } from '../shared/control/schema.js';
import { AdaptationError } from '../shared/training/adapters.js';
import { parseZeroPP } from './zeropp-options.js';
import { parseOffload } from './offload-options.js';
import { modelSpec, modeledOnly } from '../shared/models/registry.js';
import { resolveModel, type ResolvedModel } from './model-options.js';
import { computeWith, readDevice } from './device-option.js';

/** The command-line options a run config is made from (yargs has already typed them). */
export interface RunOptions {
  scheme: string; // dp|zero1|zero2|zero3|all, or a comma list
  model?: string; // "64,256,256,10", or "gpt:2,64,4,32" (default DEFAULT_MODEL)
  hfConfig?: string; // a Hugging Face config.json instead of --model
  seq?: number; // a decoder's training sequence
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
  persistThreshold?: number; // ZeRO-3: DeepSpeed's stage3_param_persistence_threshold, elements
  offload?: string; // optimizer or optimizer,params (cli/offload-options.ts)
  offloadDpu?: boolean;
  hostAdamGparams?: number;
  compute: string; // auto|inline|thread|model:PRESET
  device?: string; // a device's datasheet, JSON (modeled compute on it)
  deepspeed?: string; // a DeepSpeed config whose settings become these options (cli/deepspeed.ts)
  fsdp?: string; // an accelerate FSDP config, the same way (cli/fsdp.ts)
  linkScale?: number; // with model:PRESET: collectives carry 1/K of their bytes
  tflops?: number; // with model:PRESET: its dense peak instead of the preset's
  mfu?: number; // with model:PRESET: the fraction of the peak its products reach
  threads: string; // a count, or auto
  recompute?: boolean; // GPT: keep each block's output only, recompute its insides in the backward pass
  recomputeRegather?: boolean; // with recompute, ZeRO-3: gather a block again after its recompute (DeepSpeed's)
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
  persist: '--persist-threshold',
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
export function checkAdapt(c: Pick<RunConfig, 'model' | 'adapt'>): void {
  if (!c.adapt) return;
  try {
    modelSpec(c);
  } catch (err) {
    if (err instanceof AdaptationError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The run config of these options, checked once by the schema; errors name the option. */
export function makeRunConfig(o: RunOptions, resolved: ResolvedModel = resolveModel(o)): RunConfig {
  const { model } = resolved;
  const device = o.device === undefined ? undefined : readDevice(o.device);
  const compute = computeWith(o.compute, device);
  const modeled = modeledDevice({ compute });
  const noData = modeledOnly(model);
  if (noData && !modeled) throw new ConfigError(`${resolved.option}: ${noData}`);
  if (!modeled) checkNotModeled(o);
  const overlap = parseOverlap(o);
  // Overlap on: ZeRO-3 gathers one unit ahead and one reduce-scatter runs behind, as FSDP's defaults do.
  const gatherAhead = o.gatherAhead ?? o.prefetch ?? (overlap ? 1 : 0);
  const reduceBehind = o.reduceBehind ?? o.prefetch ?? (overlap ? 1 : 0);
  const adapt = parseAdapt(o);
  checkAdapt({ model, adapt });
  const schemes = parseSchemes(o.scheme);
  const zeropp = parseZeroPP(o, schemes, adapt);
  const offload = parseOffload(o, { schemes, adapt, zeropp });
  const candidate = {
    model,
    ...(adapt ? { adapt } : {}),
    ...(zeropp ? { zeropp } : {}),
    ...(offload ? { offload } : {}),
    recompute: o.recompute ?? false,
    ...(o.recompute && o.recomputeRegather ? { recomputeRegather: true } : {}),
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
    ...(o.persistThreshold ? { persist: o.persistThreshold } : {}),
    compute,
    ...(device ? { device } : {}),
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

/** What only a modeled device takes, refused on a run with values. */
function checkNotModeled(o: RunOptions): void {
  if ((o.linkScale ?? 1) !== 1) throw new ConfigError(`--link-scale ${o.linkScale}: only with --compute model:PRESET (a run with values sends all of them)`);
  const deviceOptions = [o.tflops !== undefined && '--tflops', o.mfu !== undefined && '--mfu', o.hostAdamGparams !== undefined && '--host-adam-gparams'];
  const given = deviceOptions.filter(Boolean);
  if (given.length) throw new ConfigError(`${given.join(' and ')}: only with --compute model:PRESET (they describe a modeled device)`);
}

/** --overlap on|off; off cannot be combined with asking for overlap by name. */
function parseOverlap(o: RunOptions): boolean {
  const text = String(o.overlap ?? 'on').toLowerCase();
  if (text !== 'on' && text !== 'off') throw new ConfigError(`--overlap: "${o.overlap}" must be on or off`);
  const asked = [o.gatherAhead && '--gather-ahead', o.reduceBehind && '--reduce-behind', o.prefetch && '--prefetch'].filter(Boolean);
  if (text === 'off' && asked.length) throw new ConfigError(`--overlap off runs every collective without overlap: drop ${asked.join(', ')}`);
  return text === 'on';
}
