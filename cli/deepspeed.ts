// --deepspeed PATH: a DeepSpeed config (ds_config.json) read as zerowire's options. Each key is printed with
// what it became, or why it was left aside; "auto" is resolved as the Hugging Face Trainer resolves it (from
// the model's hidden size, or the command line's value), and said so. A flag given on the command line wins
// over the file, and the table says which won.
import { ConfigError } from '../shared/control/run-config.js';
import { readJson } from '../shared/io/json-file.js';
import type { RunOptions } from './run-config-options.js';
import { fromString, givenOnCommandLine, isBool, isInt, isObj, mappingText, Reader, type Row, type Settings } from './config-mapping.js';

const NO_BEARING = new Set([
  'steps_per_print',
  'wall_clock_breakdown',
  'zero_allow_untested_optimizer',
  'prescale_gradients',
  'dump_state',
  'train_batch_size_auto',
  'zero_force_ds_cpu_optimizer',
]);
/** DeepSpeed's config model takes its stage-3 keys by field name too (`prefetch_bucket_size` is
 *  `stage3_prefetch_bucket_size`), and one deprecated name: each read as the key it stands for. */
const ZERO_ALIAS: Record<string, string> = {
  prefetch_bucket_size: 'stage3_prefetch_bucket_size',
  param_persistence_threshold: 'stage3_param_persistence_threshold',
  model_persistence_threshold: 'stage3_model_persistence_threshold',
  max_live_parameters: 'stage3_max_live_parameters',
  max_reuse_distance: 'stage3_max_reuse_distance',
  gather_16bit_weights_on_model_save: 'stage3_gather_16bit_weights_on_model_save',
  stage3_gather_fp16_weights_on_model_save: 'stage3_gather_16bit_weights_on_model_save',
};
const ZERO_NO_BEARING = new Set([
  'load_from_fp32_weights',
  'elastic_checkpoint',
  'ignore_unused_parameters',
  'legacy_stage1',
  'memory_efficient_linear',
  'pipeline_loading_checkpoint',
  'override_module_apply',
  'log_trace_cache_warnings',
  'use_multi_rank_bucket_allreduce',
  'mics_hierarchical_params_gather',
  'stage3_module_granularity_threshold',
  'stage3_use_all_reduce_for_fetch_params',
]);
const ZERO_ASIDE: Record<string, string> = {
  stage3_model_persistence_threshold: 'persisted tensors are bounded by their own size only (the threshold)',
  zero_quantized_nontrainable_weights: 'frozen weights are gathered in 16 bits here',
  allgather_bucket_size: "ZeRO-1/2's working copy is gathered unit by unit, not in buckets of this size",
  allgather_partitions: 'the working copy is always all-gathered after the update',
  reduce_scatter: 'sharded gradients are always reduce-scattered',
  contiguous_gradients: 'gradients are laid out contiguously already',
  stage3_max_live_parameters: 'gathers are bounded by --gather-ahead units instead',
  // DeepSpeed keeps a tensor gathered when the trace uses it again within this many elements: from the
  // forward to the backward pass, the last blocks before the turn (those past the head's own elements)
  stage3_max_reuse_distance:
    "a unit is released after each use and gathered again for the backward pass, where DeepSpeed keeps the last blocks before the turn (at 1e9: about 3% of a 7B model's ZeRO-3 bytes, 6% of a 1.5B model's)",
  stage3_gather_16bit_weights_on_model_save: 'checkpoints are sharded (zerowire consolidate writes one file)',
  sub_group_size: "Adam runs over the rank's whole shard",
  round_robin_gradients: 'no bearing on bytes or memory here',
};

/** zero_optimization as DeepSpeed reads it: each key by its stage-3 name, a number or truth value written as a
 *  string read as one; and each key's name as the file wrote it (an edit goes there). */
export function zeroAsRead(z: unknown): { values: Record<string, unknown>; written: Record<string, string> } {
  const values: Record<string, unknown> = {};
  const written: Record<string, string> = {};
  for (const [as, v] of Object.entries(isObj(z) ? z : {})) {
    const k = ZERO_ALIAS[as] ?? as;
    values[k] = typeof v === 'string' && v !== 'auto' ? (fromString(v) ?? v) : v;
    written[k] = as;
  }
  return { values, written };
}

/** The model's hidden size, which the Trainer's "auto" reads (null: the model has none, an MLP). */
export interface DsContext {
  hidden: number | null;
  world: number;
  /** The command line's values, which "auto" takes where the Trainer takes its own arguments'. */
  given: Pick<RunOptions, 'batch' | 'accumulate' | 'lr'>;
  bytesPerElement: number;
}

/** What the Trainer makes of an "auto" size: `of(hidden)`, rounded. */
function autoSize(r: Reader, key: string, of: (hidden: number) => number, ctx: DsContext): number {
  if (ctx.hidden === null) throw new ConfigError(`--deepspeed ${r.file}: key "${key}": "auto" needs a model with a hidden size (a decoder)`);
  return Math.round(of(ctx.hidden));
}

/** reduce_bucket_size: the buckets DP and ZeRO-1 reduce in (ZeRO-2/3 here reduce-scatter each unit, a block,
 *  as it is done, whatever the size; the row says so). */
function reduceBucket(r: Reader, k: string, v: unknown, stage: number | 'auto', ctx: DsContext): void {
  const n = r.check(k, v, isInt, 'a count of elements');
  const elems = n === 'auto' ? autoSize(r, k, (h) => h * h, ctx) : n;
  const units = stage === 2 || stage === 3 ? '; ZeRO-2/3 reduce a unit at a time here, whatever the size' : '';
  // 0: DeepSpeed reduces each gradient on its own; the least bucket here closes with each unit
  if (elems === 0) return r.put(k, v, 'bucketMib', 1 / 1024, `0: each gradient reduced on its own, a unit at a time here${units}`);
  r.put(k, v, 'bucketMib', (elems * ctx.bytesPerElement) / 2 ** 20, `${elems} elements${n === 'auto' ? ': "auto" is hidden² (the Trainer)' : ''}${units}`);
}

function zeroOptimization(r: Reader, z: Record<string, unknown>, ctx: DsContext): void {
  const key = (k: string) => `zero_optimization.${k}`;
  const stage = r.check(key('stage'), z.stage ?? 0, (x): x is number => isInt(x) && x <= 3, 'a stage 0, 1, 2 or 3');
  if (stage === 'auto') throw new ConfigError(`--deepspeed ${r.file}: key "${key('stage')}": "auto" is not a stage (0, 1, 2 or 3)`);
  // DP cannot offload: with the optimizer on the host the stage runs alone
  const offloaded = stage !== 0 && isObj(z.offload_optimizer) && String(z.offload_optimizer.device).toLowerCase() === 'cpu';
  const why = offloaded ? 'alone: DP cannot offload' : 'beside DP as the baseline';
  r.put(key('stage'), stage, 'scheme', stage === 0 ? 'dp' : `${offloaded ? '' : 'dp,'}zero${stage}`, stage === 0 ? 'DDP' : `ZeRO-${stage}, ${why}`);
  // under activation checkpointing DeepSpeed's ZeRO-3 releases a block after its recompute's forward and its
  // backward hook gathers it again (huggingface/transformers#47254): three gathers a micro-batch, not two
  if (stage === 3)
    r.put(
      key('stage'),
      stage,
      'recomputeRegather',
      true,
      'with --recompute: a block gathered for its recompute, released, and gathered again for its backward pass, as DeepSpeed does',
    );
  const named = new Map<string, string>(); // each setting by the name the file gave it
  for (const [written, v] of Object.entries(z)) {
    if (written === 'stage') continue;
    const k = ZERO_ALIAS[written] ?? written;
    const twice = named.get(k);
    if (twice) throw new ConfigError(`--deepspeed ${r.file}: keys "${key(twice)}" and "${key(written)}" name the same setting: give one`);
    named.set(k, written);
    if (k !== written) r.alias(key(written), key(k));
    if (k === 'overlap_comm') r.put(key(k), v, 'overlap', r.check(key(k), v, isBool, 'true or false') === false ? 'off' : 'on');
    else if (k === 'reduce_bucket_size') reduceBucket(r, key(k), v, stage, ctx);
    else if (k === 'stage3_prefetch_bucket_size') {
      const n = r.check(key(k), v, isInt, 'a count of elements');
      const elems = n === 'auto' ? autoSize(r, key(k), (h) => 0.9 * h * h, ctx) : n;
      const ahead = elems > 0 ? 'a unit ahead' : 'no prefetch: each unit gathered when it is reached';
      r.put(key(k), v, 'gatherAhead', elems > 0 ? 1 : 0, `${ahead}${n === 'auto' ? ': "auto" is 0.9·hidden² (the Trainer)' : ''}`);
    } else if (k === 'zero_hpz_partition_size') {
      const n = r.check(key(k), v, isInt, 'a count of ranks');
      if (n !== 'auto' && n > 1) {
        r.put(key(k), v, 'hpz', true, "ZeRO++'s hpZ");
        r.put(key(k), v, 'shardGroup', n, 'its partition: the ranks of a host');
      } else r.aside(key(k), v, 'no secondary partition (1)');
    } else if (k === 'stage3_param_persistence_threshold') {
      const n = r.check(key(k), v, isInt, 'a count of elements');
      const elems = n === 'auto' ? autoSize(r, key(k), (h) => 10 * h, ctx) : n;
      if (stage !== 3) r.aside(key(k), v, 'stage 3 only (nothing is gathered below it)');
      else
        r.put(
          key(k),
          v,
          'persistThreshold',
          elems,
          `tensors of at most ${elems} elements kept whole, never gathered${n === 'auto' ? ': "auto" is 10·hidden (the Trainer)' : ''}`,
        );
    } else if (k === 'offload_optimizer' || k === 'offload_param') offload(r, z, k, stage);
    else if (k === 'mics_shard_size') {
      const n = r.check(key(k), v, (x): x is number => Number.isInteger(x), 'a count of ranks (-1: off)');
      if (n !== 'auto' && n > 1 && stage === 3) {
        r.put(key(k), v, 'scheme', 'dp,hsdp', `MiCS: ZeRO-3 within groups of ${n} ranks, replicas across (zerowire's HSDP)`);
        r.put(key(k), v, 'shardGroup', n, 'its shard group');
      } else r.aside(key(k), v, stage === 3 ? 'no MiCS groups (-1 or 1)' : 'MiCS runs on stage 3 only');
    } else if (k === 'zero_quantized_weights') r.put(key(k), v, 'qwz', r.check(key(k), v, isBool, 'true or false') === true, "ZeRO++'s qwZ");
    else if (k === 'zero_quantized_gradients') r.put(key(k), v, 'qgz', r.check(key(k), v, isBool, 'true or false') === true, "ZeRO++'s qgZ");
    else r.aside(key(k), v, ZERO_ASIDE[k] ?? (ZERO_NO_BEARING.has(k) ? 'no bearing on bytes or memory here' : 'not understood'));
  }
}

/** offload_optimizer / offload_param: `device: cpu` as --offload optimizer[,params] (one row each). */
function offload(r: Reader, z: Record<string, unknown>, k: 'offload_optimizer' | 'offload_param', stage: number | 'auto'): void {
  const key = `zero_optimization.${k}`;
  const device = (x: unknown) => (isObj(x) ? String(x.device ?? 'none').toLowerCase() : 'none');
  const [opt, par] = [device(z.offload_optimizer), device(z.offload_param)];
  const mine = k === 'offload_optimizer' ? opt : par;
  if (mine === 'none') return r.aside(key, z[k], 'device none: not offloaded');
  if (mine !== 'cpu') return r.aside(key, z[k], `device ${mine}: only the host's memory (cpu) is modeled, not ZeRO-Infinity's NVMe`);
  if (stage === 0) return r.aside(key, z[k], "stage 0 cannot offload (DeepSpeed's rule)");
  if (k === 'offload_param' && stage !== 3) return r.aside(key, z[k], 'parameter offload is stage 3 only');
  if (k === 'offload_param' && opt !== 'cpu') return r.aside(key, z[k], 'offloaded here with the optimizer only (offload_optimizer.device cpu)');
  const what = opt === 'cpu' && par === 'cpu' && stage === 3 ? 'optimizer,params' : 'optimizer';
  r.put(
    key,
    z[k],
    'offload',
    what,
    k === 'offload_optimizer' ? "the masters and Adam's moments in host memory, Adam run there" : "ZeRO-3's 16-bit shard in host memory too",
  );
}

function batches(r: Reader, o: Record<string, unknown>, ctx: DsContext): void {
  const acc = o.gradient_accumulation_steps;
  let accumulate = ctx.given.accumulate ?? 1;
  if (acc !== undefined) {
    const n = r.check('gradient_accumulation_steps', acc, (x): x is number => isInt(x) && x >= 1, 'a positive integer');
    accumulate = n === 'auto' ? accumulate : n;
    r.put('gradient_accumulation_steps', acc, 'accumulate', accumulate, n === 'auto' ? '"auto": the command line\'s' : '');
  }
  const micro = o.train_micro_batch_size_per_gpu;
  const global = o.train_batch_size;
  if (global !== undefined && global !== 'auto') {
    const B = r.check('train_batch_size', global, (x): x is number => isInt(x) && x >= 1, 'a positive integer') as number;
    r.put('train_batch_size', global, 'batch', B, 'the global batch');
    if (micro !== undefined && micro !== 'auto' && micro !== B / (ctx.world * accumulate))
      throw new ConfigError(
        `--deepspeed ${r.file}: train_batch_size ${B} is not train_micro_batch_size_per_gpu ${String(micro)} × ${ctx.world} ranks × ${accumulate} steps`,
      );
    if (micro !== undefined) r.aside('train_micro_batch_size_per_gpu', micro, 'train_batch_size says it (their product is checked)');
  } else if (micro !== undefined) {
    const m = r.check('train_micro_batch_size_per_gpu', micro, (x): x is number => isInt(x) && x >= 1, 'a positive integer');
    if (m === 'auto') r.aside('train_micro_batch_size_per_gpu', micro, '"auto": the command line\'s --batch');
    else r.put('train_micro_batch_size_per_gpu', micro, 'batch', m * ctx.world * accumulate, `${m} × ${ctx.world} ranks × ${accumulate} steps`);
    if (global !== undefined) r.aside('train_batch_size', global, '"auto": from the micro-batch');
  }
}

function precision(r: Reader, o: Record<string, unknown>): void {
  const enabled = (k: string) => isObj(o[k]) && (o[k] as Record<string, unknown>).enabled;
  const bf16 = enabled('bf16');
  const fp16 = enabled('fp16');
  const on = (x: unknown) => x === true || x === 'auto';
  if (on(bf16)) r.put('bf16.enabled', bf16, 'wireDtype', 'bf16', 'mixed precision');
  else if (on(fp16)) r.put('fp16.enabled', fp16, 'wireDtype', 'bf16', 'fp16 as bf16: the same bytes; no loss scaling here');
  else if (o.bf16 !== undefined || o.fp16 !== undefined) r.put('bf16/fp16', false, 'wireDtype', 'fp32', 'neither enabled');
  // The other block and the loss-scaling keys: named, with why they change nothing here.
  if (on(bf16) && o.fp16 !== undefined) r.aside('fp16', o.fp16, 'bf16 is taken where both say enabled (the Trainer: its --bf16)');
  else if (on(fp16) && o.bf16 !== undefined) r.aside('bf16', o.bf16, 'not enabled');
  for (const block of ['bf16', 'fp16'] as const)
    if (isObj(o[block]) && (block === 'bf16' ? on(bf16) : on(fp16) && !on(bf16)))
      for (const [k, v] of Object.entries(o[block] as Record<string, unknown>)) if (k !== 'enabled') r.aside(`${block}.${k}`, v, 'loss scaling: not here');
}

function optimizer(r: Reader, opt: unknown, ctx: DsContext): void {
  if (!isObj(opt)) return r.aside('optimizer', opt, 'not understood');
  const type = String(opt.type ?? '');
  if (!/^adamw?$/i.test(type))
    throw new ConfigError(`--deepspeed ${r.file}: key "optimizer.type": only Adam and AdamW are read, got ${JSON.stringify(opt.type)}`);
  const params = isObj(opt.params) ? opt.params : {};
  if (params.lr !== undefined) {
    const lr =
      params.lr === 'auto' ? ctx.given.lr : r.check('optimizer.params.lr', params.lr, (x): x is number => typeof x === 'number' && x > 0, 'a positive number');
    r.put('optimizer.params.lr', params.lr, 'lr', lr as number, params.lr === 'auto' ? '"auto": the command line\'s' : '');
  }
  for (const k of Object.keys(params).filter((k) => k !== 'lr'))
    r.aside(`optimizer.params.${k}`, params[k], k === 'weight_decay' ? 'Adam here has no weight decay' : "Adam's betas and eps are torch's defaults here");
}

/** A parsed ds_config (`file` names it): what it sets, each key's row, and notes. */
export function readDeepspeedConfig(json: unknown, file: string, ctx: DsContext, explicit: (flag: string) => boolean): { set: Settings; rows: Row[] } {
  if (!isObj(json)) throw new ConfigError(`--deepspeed ${file}: expected a JSON object (a DeepSpeed config)`);
  const r = new Reader('--deepspeed', file, explicit);
  if (json.zero_optimization !== undefined) {
    if (!isObj(json.zero_optimization)) throw new ConfigError(`--deepspeed ${file}: key "zero_optimization": expected an object`);
    zeroOptimization(r, json.zero_optimization, ctx);
  }
  batches(r, json, ctx);
  precision(r, json);
  if (json.optimizer !== undefined) optimizer(r, json.optimizer, ctx);
  const done = new Set(['zero_optimization', 'gradient_accumulation_steps', 'train_batch_size', 'train_micro_batch_size_per_gpu', 'bf16', 'fp16', 'optimizer']);
  for (const [k, v] of Object.entries(json)) {
    if (done.has(k)) continue;
    if (k === 'gradient_clipping') r.aside(k, v, 'not applied here (clipping adds one scalar all-reduce a step)');
    else if (k === 'scheduler') r.aside(k, v, 'a constant learning rate here');
    else r.aside(k, v, NO_BEARING.has(k) ? 'no bearing on a training step' : 'not understood');
  }
  return { set: r.set, rows: r.rows };
}

/** The options `a` with a --deepspeed file's settings on them (the command line's flags kept), its table, and
 *  the file as read with the context it was read in (plan reads it again, changed: plan-change.ts); `a` as it
 *  is without one. `hidden`: the model's, for "auto". */
export function withDeepspeed<T extends Pick<RunOptions, 'batch' | 'accumulate' | 'lr' | 'wireDtype'> & { deepspeed?: string }>(
  a: T,
  hidden: number | null,
  world: number,
): { options: T; text: string | null; json?: Record<string, unknown>; context?: DsContext } {
  if (a.deepspeed === undefined) return { options: a, text: null };
  const context: DsContext = { hidden, world, given: { batch: a.batch, accumulate: a.accumulate, lr: a.lr }, bytesPerElement: a.wireDtype === 'fp32' ? 4 : 2 };
  const json = readJson(a.deepspeed, '--deepspeed');
  const { set, rows } = readDeepspeedConfig(json, a.deepspeed, context, (f) => givenOnCommandLine(f));
  return { options: { ...a, ...set }, text: mappingText(a.deepspeed, rows), json: json as Record<string, unknown>, context };
}

/** A decoder's hidden size from its configuration, or null. */
export const hiddenOf = (model: { [k: string]: unknown }): number | null => (typeof model.dim === 'number' ? model.dim : null);
