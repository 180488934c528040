// --fsdp PATH: an accelerate config (YAML, as `accelerate config` writes it) with FSDP, read as zerowire's
// options: the sharding strategy as the scheme, the prefetches as the gather window, activation
// checkpointing, mixed precision, the processes as the world. Every key printed with what it became.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { ConfigError } from '../shared/control/run-config.js';
import { readText } from '../shared/io/json-file.js';
import { givenOnCommandLine, isBool, isObj, mappingText, Reader, type Row, type Settings } from './config-mapping.js';

/** FSDP's sharding strategies (by name, or torch's ShardingStrategy number) as the schemes that do the same. */
const STRATEGY: Record<string, [string, string]> = {
  FULL_SHARD: ['dp,zero3', 'ZeRO-3: parameters, gradients and optimizer states sharded'],
  SHARD_GRAD_OP: ['dp,zero2', 'ZeRO-2: gradients and optimizer states sharded, parameters kept after the forward'],
  NO_SHARD: ['dp', 'DDP'],
  HYBRID_SHARD: ['dp,hsdp', 'HSDP: ZeRO-3 within a node, replicas across nodes'],
  _HYBRID_SHARD_ZERO2: ['dp,hsdp', 'HSDP (its ZeRO-2 form is modeled as ZeRO-3 within a node)'],
};
const BY_NUMBER = ['', 'FULL_SHARD', 'SHARD_GRAD_OP', 'NO_SHARD', 'HYBRID_SHARD', '_HYBRID_SHARD_ZERO2'];

const ASIDE: Record<string, string> = {
  fsdp_auto_wrap_policy: 'a unit is a transformer block (TRANSFORMER_BASED_WRAP) already',
  fsdp_transformer_layer_cls_to_wrap: 'a unit is a transformer block already',
  fsdp_state_dict_type: 'checkpoints are sharded (zerowire consolidate writes one file)',
  fsdp_sync_module_states: 'every rank derives the same initial weights from the seed',
  fsdp_use_orig_params: 'no bearing on bytes or memory here',
  fsdp_cpu_ram_efficient_loading: 'no bearing on a training step',
  fsdp_version: 'FSDP1 and FSDP2 shard alike here',
  fsdp_reshard_after_forward: 'read with the sharding strategy',
};
const NO_BEARING = new Set([
  'compute_environment',
  'debug',
  'machine_rank',
  'main_process_ip',
  'main_process_port',
  'main_training_function',
  'rdzv_backend',
  'same_network',
  'tpu_env',
  'tpu_use_cluster',
  'tpu_use_sudo',
  'use_cpu',
  'enable_cpu_affinity',
  'downcast_bf16',
]);

function fsdpConfig(r: Reader, f: Record<string, unknown>): void {
  const key = (k: string) => `fsdp_config.${k}`;
  for (const [k, v] of Object.entries(f)) {
    if (k === 'fsdp_sharding_strategy') {
      const name = typeof v === 'number' ? BY_NUMBER[v] : String(v).toUpperCase();
      const s = STRATEGY[name ?? ''];
      if (!s) throw new ConfigError(`--fsdp ${r.file}: key "${key(k)}": FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD, got ${JSON.stringify(v)}`);
      const alone = f.fsdp_offload_params === true && name !== 'NO_SHARD'; // DP cannot offload
      r.put(key(k), v, 'scheme', alone ? s[0].replace(/^dp,/, '') : s[0], `${s[1]}, ${alone ? 'alone: DP cannot offload' : 'beside DP as the baseline'}`);
    } else if (k === 'fsdp_backward_prefetch' || k === 'fsdp_backward_prefetch_policy') {
      // `_policy`: the name older accelerate releases wrote
      const p = String(v).toUpperCase();
      if (!['BACKWARD_PRE', 'BACKWARD_POST', 'NO_PREFETCH'].includes(p))
        throw new ConfigError(`--fsdp ${r.file}: key "${key(k)}": BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH, got ${JSON.stringify(v)}`);
      r.put(key(k), v, 'gatherAhead', p === 'NO_PREFETCH' ? 0 : 1, p === 'NO_PREFETCH' ? 'no gather ahead' : 'the next unit gathered ahead (both passes)');
    } else if (k === 'fsdp_forward_prefetch') {
      r.check(key(k), v, isBool, 'true or false');
      r.aside(key(k), v, 'the gather window is one for both passes: fsdp_backward_prefetch sets it');
    } else if (k === 'fsdp_offload_params') {
      const on = r.check(key(k), v, isBool, 'true or false') === true;
      const raw = f.fsdp_sharding_strategy;
      const strategy = typeof raw === 'number' ? BY_NUMBER[raw] : String(raw ?? 'FULL_SHARD').toUpperCase();
      if (!on) r.aside(key(k), v, 'not offloaded');
      else if (strategy === 'NO_SHARD') r.aside(key(k), v, "NO_SHARD (DDP) offloads nothing here, as DeepSpeed's stage 0 cannot");
      else {
        const params = strategy !== 'SHARD_GRAD_OP';
        r.put(
          key(k),
          v,
          'offload',
          params ? 'optimizer,params' : 'optimizer',
          `FSDP's CPU offload: the optimizer on the host${params ? ', the parameter shards there too' : ''}`,
        );
      }
    } else if (k === 'fsdp_activation_checkpointing') {
      const on = r.check(key(k), v, isBool, 'true or false') === true;
      r.put(key(k), v, 'recompute', on, on ? 'each block keeps its input only' : '');
    } else r.aside(key(k), v, ASIDE[k] ?? 'not understood');
  }
}

/** A parsed accelerate config (`file` names it), with the world the command line has. */
export function readFsdpConfig(doc: unknown, file: string, world: number, explicit: (flag: string) => boolean): { set: Settings; rows: Row[] } {
  if (!isObj(doc)) throw new ConfigError(`--fsdp ${file}: expected a YAML mapping (an accelerate config)`);
  const r = new Reader('--fsdp', file, explicit);
  if (doc.distributed_type !== 'FSDP') throw new ConfigError(`--fsdp ${file}: key "distributed_type": FSDP, got ${JSON.stringify(doc.distributed_type)}`);
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'distributed_type') r.aside(k, v, 'read: this is an FSDP config');
    else if (k === 'fsdp_config') {
      if (!isObj(v)) throw new ConfigError(`--fsdp ${file}: key "fsdp_config": expected a mapping`);
      fsdpConfig(r, v);
    } else if (k === 'mixed_precision') {
      const p = String(v);
      if (!['bf16', 'fp16', 'no'].includes(p)) throw new ConfigError(`--fsdp ${file}: key "mixed_precision": bf16, fp16 or no, got ${JSON.stringify(v)}`);
      r.put(k, v, 'wireDtype', p === 'no' ? 'fp32' : 'bf16', p === 'fp16' ? 'fp16 as bf16: the same bytes' : '');
    } else if (k === 'num_processes') {
      if (v !== world)
        throw new ConfigError(`--fsdp ${file}: num_processes ${JSON.stringify(v)} and the world of ${world} ranks disagree (--world, --hostfile)`);
      r.aside(k, v, `the world, ${world}: agrees`);
    } else if (k === 'num_machines') r.aside(k, v, 'the hosts: --hostfile (or --shard-group) says them');
    else r.aside(k, v, NO_BEARING.has(k) ? 'no bearing on a training step' : 'not understood');
  }
  return { set: r.set, rows: r.rows };
}

/** The YAML of `path`, or one line naming it and where it broke. */
function readYaml(path: string): unknown {
  const text = readText(path, '--fsdp');
  // Loaded here, not at start-up: every zerowire process would pay ~30 ms for a library only --fsdp uses.
  const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml;
  try {
    return yaml.parse(text);
  } catch (err) {
    if (!(err instanceof yaml.YAMLParseError)) throw err;
    const at = err.linePos?.[0];
    throw new ConfigError(
      `--fsdp ${path}: not YAML (${at ? `line ${at.line}, column ${at.col}: ` : ''}${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')})`,
    );
  }
}

/** The options `a` with an --fsdp file's settings on them (the command line's flags kept), and its table. */
export function withFsdp<T extends { fsdp?: string }>(a: T, world: number): { options: T; text: string | null } {
  if (a.fsdp === undefined) return { options: a, text: null };
  const { set, rows } = readFsdpConfig(readYaml(a.fsdp), a.fsdp, world, (f) => givenOnCommandLine(f));
  return { options: { ...a, ...set }, text: mappingText(a.fsdp, rows) };
}
