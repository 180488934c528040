// The options every run command shares (model, schemes, sizes, files, liveness) as yargs defines them, with
// their help; cli/job.ts turns them into the job.
import yargs, { type Argv } from 'yargs';
import { fineTuneOptions } from './finetune-options.js';
import { zeroPPOptions } from './zeropp-options.js';
import { offloadOptions } from './offload-options.js';
import { LOG_FORMATS, LOG_LEVELS } from './log.js';
import { DEVICES } from '../shared/whatif/devices.js';
import { ConfigError, DEFAULT_BUCKET_BYTES } from '../shared/control/run-config.js';
import { modelOptions } from './model-options.js';
import { DEVICE_HELP } from './device-option.js';
import { LIVENESS } from '../shared/transport/liveness.js';

/** The CLI before its commands: ZEROWIRE_<OPTION> for every option, and the log level. */
export function baseCli(argv: string[]) {
  return (
    yargs(argv)
      .scriptName('zerowire')
      .env('ZEROWIRE')
      .option('log-level', { choices: LOG_LEVELS, default: 'info', global: true, describe: 'how much the log says' })
      .option('wide', {
        type: 'boolean',
        default: false,
        global: true,
        describe: 'on a terminal, every table column and whole lines however wide (a file or a pipe gets them always; the JSON has everything)',
      })
      .option('log-format', {
        choices: LOG_FORMATS,
        default: 'pretty',
        global: true,
        describe: 'logs on stderr: pretty (one line per event, coloured on a terminal) or json (one JSON object per line)',
      })
      // ZEROWIRE_BLAS is read where the products are computed (shared/tensor/blas.ts), in this process, the ranks
      // it starts and their compute threads; as an option it is also what yargs makes of the variable.
      .option('blas', {
        type: 'string',
        global: true,
        describe: "the products' BLAS: off (the WebAssembly kernels), or a CBLAS library's path (default: the machine's OpenBLAS/BLIS/MKL if any)",
      })
      .middleware((a) => {
        if (a.blas !== undefined) process.env.ZEROWIRE_BLAS = String(a.blas);
        givenOnce(a, argv);
        notANumber(a, argv);
      })
  );
}
export type Cli = ReturnType<typeof baseCli>;

/** An option given twice: yargs makes a list of a string option and adds up a number option (--steps 2
 *  --steps 1 ran 3 steps), so neither is taken. `_` and compare's `reports` are lists by design. */
function givenOnce(a: Record<string, unknown>, argv: string[]): void {
  for (const key of Object.keys(a)) {
    if (key === '_' || key === 'reports' || /[A-Z]/.test(key)) continue;
    const given = argv.filter((x) => x === `--${key}` || x.startsWith(`--${key}=`));
    if (given.length > 1) throw new ConfigError(`--${key}: given ${given.length} times: give it once`);
  }
}

/** yargs reads a number option given "abc" as NaN, and the run config's check would then say "got null":
 *  refuse it here, naming the option and the text as it was given. */
function notANumber(a: Record<string, unknown>, argv: string[]): void {
  for (const [key, value] of Object.entries(a)) {
    if (typeof value !== 'number' || !Number.isNaN(value) || /[A-Z]/.test(key)) continue;
    const at = argv.findIndex((x) => x === `--${key}` || x.startsWith(`--${key}=`));
    const given =
      at < 0 ? process.env[`ZEROWIRE_${key.replace(/-/g, '_').toUpperCase()}`] : argv[at].includes('=') ? argv[at].slice(key.length + 3) : argv[at + 1];
    throw new ConfigError(`--${key}: ${given === undefined ? 'no value given' : `"${given}" is not a number`}`);
  }
}

/** torchrun's variable for --world. */
export const envWorld = process.env.WORLD_SIZE;

/** The options a first run needs, first; the rest grouped by what they are for (`zerowire local --help`). */
const HELP_GROUPS: [string, string[]][] = [
  ['The run:', ['world', 'scheme', 'model', 'hf-config', 'seq', 'steps', 'batch', 'lr', 'seed']],
  ['Outputs:', ['out', 'html', 'trace', 'dump']],
  ['Training:', ['accumulate', 'samples', 'wire-dtype', 'unit', 'shard-group', 'recompute', 'recompute-regather', 'rope-theta', 'rms-eps']],
  ['Fine-tuning:', ['lora', 'lora-targets', 'freeze']],
  ["ZeRO++'s components (on zero3):", ['qwz', 'hpz', 'qgz', 'quant-block']],
  ['Offload (host memory, docs/offload.md):', ['offload', 'offload-dpu', 'host-adam-gparams']],
  ['Where it computes (and GPU what-ifs, docs/what-if.md):', ['compute', 'threads', 'tflops', 'mfu', 'link-scale']],
  ['Overlap:', ['overlap', 'bucket-mib', 'gather-ahead', 'reduce-behind', 'prefetch', 'persist-threshold', 'chunk-kib']],
  ['Checkpoints:', ['checkpoint-every', 'checkpoint-dir', 'resume']],
  [
    'Network, liveness and security:',
    ['preflight', 'timeout', 'join-timeout', 'heartbeat-timeout', 'max-rank-memory', 'token', 'token-file', 'tls-cert', 'tls-key', 'tls-ca'],
  ],
  ['Logs and the rest:', ['log-level', 'log-format', 'wide', 'blas', 'help', 'version']],
];

/** Groups the help of a run command (`local`, `coordinator`, `links`, `simulate`) by HELP_GROUPS, with its
 *  examples; `listen`: the command's own options that go with the network's; `apart`: options of the run that
 *  do not apply to this command, left out of its help. */
export function runHelp<T>(y: Argv<T>, examples: [string, string][], listen: string[] = [], apart: readonly string[] = []): Argv<T> {
  for (const [heading, keys] of HELP_GROUPS) {
    const shown = (heading.startsWith('Network') ? [...listen, ...keys] : keys).filter((k) => !apart.includes(k));
    if (shown.length) y = y.group(shown, heading);
  }
  for (const k of apart) y = y.hide(k);
  for (const [command, what] of examples) y = y.example(command, what);
  return y;
}

/** The run's options; `auto`: the world size may be 'auto' (the coordinator), or it is a number (local). */
export function runOptions<T>(y: Argv<T>, auto = false) {
  return computeOptions(
    modelOptions(y)
      .option('world', {
        type: 'string',
        describe: auto
          ? `number of ranks (also WORLD_SIZE; default ${envWorld ?? 4}, or --hostfile's slots), or 'auto': settle on the ranks that join`
          : `number of rank processes (also WORLD_SIZE; default ${envWorld ?? 4})`,
      })
      .option('scheme', {
        type: 'string',
        default: 'all',
        describe: 'dp|zero1|zero2|zero3|hsdp|zeropp|all, or a comma list (all: hsdp and zeropp too where there are 2+ hosts or groups of 2+ ranks)',
      })
      .option('steps', { type: 'number', default: 20, describe: 'optimizer steps each scheme trains (from the same initial weights and data)' })
      .option('batch', { type: 'number', default: 64, describe: 'global batch per optimizer step: batch/(world x accumulate) rows per rank and micro-batch' })
      .option('lr', { type: 'number', default: 1e-3, describe: "Adam's learning rate (betas 0.9, 0.999, eps 1e-8)" })
      .option('seed', { type: 'number', default: 0, describe: 'seeds the initial weights and the data: the same seed, the same run' }),
  )
    .option('shard-group', {
      type: 'number',
      default: 0,
      describe: 'hsdp: ranks per shard group (ZeRO-3 within it, replicas across groups); 0: the ranks of one host',
    })
    .option('accumulate', {
      type: 'number',
      default: 1,
      describe: 'micro-batches per optimizer step (gradient accumulation): each of batch/(world*accumulate) rows per rank',
    })
    .option('samples', { type: 'number', default: 4096, describe: 'size of the synthetic data set' })
    .option('wire-dtype', { choices: ['bf16', 'fp32'], default: 'bf16', describe: 'working copy, gradients and wire: bf16 (mixed precision) or fp32 (exact)' })
    .option('unit', { choices: ['layer', 'model'], default: 'layer', describe: 'granularity of a gather and of a gradient bucket' })
    .option('compute', {
      type: 'string',
      default: 'auto',
      describe: `where forward/backward run: inline (the rank's own thread, the event loop turning between units), thread (a worker thread), auto (a thread with overlap on and two cores per rank, or where one unit would keep the rank from its heartbeats; each rank decides), or model:PRESET (no values: each layer takes a modeled accelerator's time while every collective really runs; presets ${DEVICES.map((d) => d.name).join(', ')}; docs/what-if.md)`,
    })
    .option('tflops', { type: 'number', describe: "with --compute model:PRESET: the device's dense bf16 peak, TFLOPS, instead of the preset's (any device)" })
    .option('mfu', {
      type: 'number',
      describe:
        'with --compute model:PRESET: the fraction of the peak its matrix products reach (the H200 fit: 0.754; norms, activations and launches come on top)',
    })
    .option('link-scale', {
      type: 'number',
      default: 1,
      describe: 'with --compute model:PRESET: every collective sends 1/K of its bytes, so each link stands for one K times faster (same latency)',
    })
    .option('threads', {
      type: 'string',
      default: '1',
      describe: "threads computing each rank's products, like PyTorch's intra-op threads (auto: this host's cores over its ranks)",
    });
}

/** The job as other tools wrote it: a GPU's datasheet, a DeepSpeed or an accelerate FSDP config. */
function jobFileOptions<T>(y: Argv<T>) {
  return y
    .option('device', { type: 'string', describe: DEVICE_HELP })
    .option('deepspeed', {
      type: 'string',
      describe:
        "a DeepSpeed config (ds_config.json): its stage, buckets, overlap, batches, precision and ZeRO++ as these options (the command line's flags win); every key printed with what it became",
    })
    .option('fsdp', {
      type: 'string',
      describe:
        "an accelerate FSDP config (YAML): its sharding strategy, prefetch, activation checkpointing and precision as these options (the command line's flags win); every key printed",
    });
}

/** DeepSpeed's ZeRO-3 under activation checkpointing, for `local`, `coordinator`, `simulate` and `plan`. */
export const RECOMPUTE_REGATHER = {
  type: 'boolean',
  describe:
    "with --recompute, ZeRO-3: a block gathered for its recompute is released after it and gathered again for its backward pass, as DeepSpeed's ZeRO-3 does without a complete trace of the step (--deepspeed with stage 3 sets it); without, the backward's gather serves both, as FSDP's does and DeepSpeed's with one",
} as const;

/** How a run trains: where compute runs, on how many threads, with what overlap and recomputation. */
function computeOptions<T>(y: Argv<T>) {
  return offloadOptions(zeroPPOptions(fineTuneOptions(jobFileOptions(y))))
    .option('recompute', {
      type: 'boolean',
      default: false,
      describe:
        "a transformer (gpt:, llama:, a named shape): activation checkpointing per block (keep each block's input, recompute its insides in the backward pass)",
    })
    .option('recompute-regather', RECOMPUTE_REGATHER)
    .option('preflight', {
      choices: ['off', 'ring', 'all-pairs'],
      default: 'ring',
      describe:
        'before the schemes, measure each ring link (ring) or every pair of hosts (all-pairs): rate with one stream and several, round trip (docs/lan.md)',
    })
    .option('overlap', {
      choices: ['on', 'off'],
      default: 'on',
      describe:
        'on: every scheme at its best (DP/ZeRO-1 reduce DDP buckets during the backward pass, ZeRO-2/3 reduce-scatter behind it, ZeRO-3 gathers ahead); off: the no-overlap baseline',
    })
    .option('bucket-mib', {
      type: 'number',
      default: DEFAULT_BUCKET_BYTES / 2 ** 20,
      describe: "DP/ZeRO-1: gradient bucket cap in MiB (DDP's bucket_cap_mb: a bucket closes once its units reach it; the first at 1 MiB)",
    })
    .option('gather-ahead', { type: 'number', describe: 'ZeRO-3: gather this many units ahead of the one computing (0, 1, 2; default 1 with --overlap on)' })
    .option('reduce-behind', {
      type: 'number',
      describe: "ZeRO-2/3: let this many units' gradient reduce-scatters run behind the backward pass (0, 1, 2; default 1 with --overlap on)",
    })
    .option('prefetch', { type: 'number', describe: 'both --gather-ahead and --reduce-behind (the older name for the two)' })
    .option('persist-threshold', {
      type: 'number',
      describe:
        "ZeRO-3 and HSDP: tensors of at most this many elements kept whole on every rank and never gathered (DeepSpeed's stage3_param_persistence_threshold; not with ZeRO++'s components)",
    })
    .option('chunk-kib', { type: 'number', default: 1024, describe: 'collective chunk size' })
    .option('timeout', { type: 'number', default: 60, describe: 'seconds a collective or ring set-up may wait' })
    .option('join-timeout', { type: 'number', default: 120, describe: 'seconds to wait for all ranks to join' })
    .option('max-rank-memory', { type: 'string', describe: 'leave out the schemes whose per-rank peak exceeds this (refuse the run if none fits), e.g. 2GB' })
    .option('token', { type: 'string', describe: 'ranks must present this join token (prefer the ZEROWIRE_TOKEN environment variable)' })
    .option('token-file', { type: 'string', describe: 'read the join token from this file (a Docker or Kubernetes secret)' })
    .option('heartbeat-timeout', {
      type: 'number',
      default: LIVENESS.timeoutMs / 1000,
      describe:
        'seconds of silence after which a rank or the coordinator counts as lost on a quiet link (on a loaded one the limit adapts, up to 10/3 of this)',
    })
    .option('checkpoint-every', { type: 'number', describe: 'every K steps each rank writes its shards (fp32 master, m, v, step) under --checkpoint-dir' })
    .option('checkpoint-dir', {
      type: 'string',
      describe: 'checkpoint folder (shared by all ranks: local disk for `local`, a shared file system across machines)',
    })
    .option('resume', { type: 'string', describe: 'continue each scheme from its newest complete checkpoint in this folder' })
    .option('out', { type: 'string', describe: 'write the full report as JSON here' })
    .option('trace', { type: 'string', describe: 'write the run as a Chrome trace (Perfetto, chrome://tracing) here' })
    .option('html', { type: 'string', describe: 'write the report with its figures as one self-contained HTML file here' })
    .option('dump', { type: 'string', describe: 'write initial/final parameters and the data as safetensors into this folder' });
}
