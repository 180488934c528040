// `zerowire plan`: model states (and activations) per rank for each scheme, and whether they fit.
import { print, widthOf } from '../print.js';
import { ConfigError, DEFAULT_BUCKET_BYTES } from '../../shared/control/run-config.js';
import { checkAdapt, parseAdapt } from '../run-config-options.js';
import { fineTuneOptions } from '../finetune-options.js';
import { ShardLayout } from '../../shared/training/layout.js';
import { defaultBatch, modelSpec } from '../../shared/models/registry.js';
import { DEVICE_HELP } from '../device-option.js';
import { planPlacement } from '../hostfile.js';
import { hiddenOf, withDeepspeed } from '../deepspeed.js';
import { withFsdp } from '../fsdp.js';
import { modelOptions, readingText, resolveModel, type ModelArgs, type ResolvedModel } from '../model-options.js';
import { parseBytes, parseCount } from '../sizes.js';
import { formatPlan, k8sResources, plan } from '../plan.js';
import type { Argv } from 'yargs';
import { envWorld, RECOMPUTE_REGATHER, type Cli } from '../options.js';
import { compareWithRun, whatIfPlan, type WhatIfPlanArgs } from '../plan-whatif.js';
import { DEFAULT_INTRA_GBIT, needPlan, schemeNeeds } from '../plan-need.js';
import { simulatedNeeds } from '../plan-need-simulated.js';
import { checkNeeds, checkPossible } from '../plan-check.js';
import { offloadOptions } from '../offload-options.js';
import { checkWritableFile } from '../../shared/io/writable.js';
import { changePlan, DEFAULT_NEED, type ChangeArgs } from '../plan-change.js';
import { givenOnCommandLine, type Settings } from '../config-mapping.js';
import type { Link } from '../../shared/predict/step-prediction.js';

/** `plan --compute` and `plan --run`'s options: a prediction's (plan-whatif.ts), with the model and device
 *  optional (--run reads them from its report) and the links it is predicted on. */
interface WhatIfArgv extends Omit<WhatIfPlanArgs, 'compute' | 'batch'> {
  run?: string;
  compute?: string;
  batch?: number;
  gbit?: number;
  latencyUs: number;
  intraGbit: number;
}

/** The link rate a prediction assumes when none is given. */
const DEFAULT_GBIT = 10;

function checkShardGroup(G: number, world: number): void {
  if (G !== 0 && !(Number.isInteger(G) && G >= 2 && world % G === 0 && world / G >= 2))
    throw new RangeError(`--shard-group: ${G} must divide --world ${world} into at least 2 groups of at least 2 ranks`);
}

/** --latency-us (per ring step, every link) checked, and the links inside a host (--intra-gbit) it makes. */
function intraLink(a: WhatIfArgv): Link {
  if (!(a.latencyUs >= 0)) throw new RangeError(`--latency-us: ${a.latencyUs} must be zero or more`);
  if (!(a.intraGbit > 0)) throw new RangeError(`--intra-gbit: ${a.intraGbit} must be a positive rate in Gbit/s`);
  return { gbit: a.intraGbit, latencyUs: a.latencyUs };
}

/** --compute model:PRESET (predict a run) or --run REPORT (predicted beside measured); with --deepspeed, the
 *  job as configured and what to change (plan-change.ts). */
function whatIf(a: WhatIfArgv & JobArgs): void {
  if (a.gbit !== undefined && !(a.gbit > 0)) throw new RangeError(`--gbit: ${a.gbit} must be a positive rate in Gbit/s`);
  const intra = intraLink(a);
  const link = { gbit: a.gbit ?? DEFAULT_GBIT, latencyUs: a.latencyUs };
  // --run without --gbit: the links the run's pre-flight measured, if it ran one
  if (a.run !== undefined) return print(a, compareWithRun(a.run, a.gbit === undefined ? null : link, intra));
  if (a.model === undefined && a.hfConfig === undefined) throw new ConfigError('plan --compute: give the --model to predict (e.g. llama2-7b) or --hf-config');
  checkShardGroup(a.shardGroup, a.world);
  printReading(a);
  const text = whatIfPlan({ ...a, compute: a.compute ?? 'auto', batch: a.batch ?? a.world }, link, intra);
  print(a, text);
  if (a.job) {
    const { raw, dsJson, dsContext } = a.job;
    const base = { ...raw, compute: raw.compute ?? 'auto', batch: raw.batch ?? a.world, deepspeed: a.deepspeed!, dsJson, dsContext };
    const { text, refused } = changePlan({ ...base, need: a.need, emitDeepspeed: a.emitDeepspeed }, link, intra, (f) => givenOnCommandLine(f), widthOf(a));
    print(a, `\n${text}`);
    if (refused) throw new ConfigError(refused);
  } else if (a.emitDeepspeed !== undefined) throw new ConfigError('--emit-deepspeed: only with --deepspeed FILE (the config it changes)');
}

/** What plan-change needs beside the prediction's options. */
interface JobArgs {
  deepspeed?: string;
  need?: number;
  emitDeepspeed?: string;
  job?: Pick<ChangeArgs, 'dsJson' | 'dsContext'> & { raw: WhatIfArgv };
}

/** --need PCT: the least link rate between hosts each scheme needs (plan-need.ts). */
async function need(
  a: WhatIfArgv & { need: number; hosts?: number; html?: string; check: boolean; checkRate: string; checkSteps: number; simulate: boolean },
): Promise<void> {
  if ((a.compute === undefined && a.device === undefined) || (a.model === undefined && a.hfConfig === undefined))
    throw new ConfigError('plan --need: give --compute model:PRESET (or --device) and the --model (or --hf-config) to size the link for');
  if (a.run !== undefined || a.gbit !== undefined)
    throw new ConfigError(
      `plan --need: ${a.run !== undefined ? '--run' : '--gbit'} does not go with --need (it searches the link rate; with --deepspeed and --gbit it says what to change at that rate)`,
    );
  const hosts = a.hosts ?? (a.shardGroup ? a.world / a.shardGroup : undefined);
  if (hosts === undefined) throw new ConfigError('plan --need: give --hosts H (or --shard-group G): the link it sizes is the one between hosts');
  if (!(Number.isInteger(hosts) && hosts >= 2 && a.world % hosts === 0))
    throw new RangeError(`--hosts: ${hosts} must divide --world ${a.world} into at least 2 hosts`);
  const G = a.world / hosts;
  if (a.shardGroup && a.shardGroup !== G)
    throw new ConfigError(`--hosts ${hosts} and --shard-group ${a.shardGroup} disagree: ${hosts} hosts of --world ${a.world} hold ${G} ranks each`);
  const intra = intraLink(a);
  const check = { rate: a.checkRate, steps: a.checkSteps };
  if (a.check) checkPossible(check);
  if (a.html) await checkWritableFile(a.html, '--html').catch((err: Error) => Promise.reject(new ConfigError(err.message))); // before the search, not after
  printReading(a);
  const args = { ...a, compute: a.compute ?? 'auto', batch: a.batch ?? a.world, shardGroup: G >= 2 ? G : 0, intra };
  const answers = schemeNeeds(args);
  print(a, `${await needPlan(args, answers, widthOf(a))}${a.html ? `\npage: ${a.html}` : ''}`);
  if (a.simulate) print(a, `\n${await simulatedNeeds(answers.plan.config, a.world, hosts, a.need / 100, answers.needs)}`);
  if (a.check) print(a, `\n${checkNeeds(args, answers.needs, check)}`);
}

/** The options of a prediction on a modeled device. */
function whatIfOptions<T>(y: Argv<T>) {
  return offloadOptions(fineTuneOptions(y))
    .option('tflops', { type: 'number', describe: "with --compute: the device's dense bf16 peak, TFLOPS, instead of the preset's (any device)" })
    .option('mfu', {
      type: 'number',
      describe: 'with --compute: the fraction of the peak its matrix products reach (the H200 fit: 0.754; norms, activations and launches come on top)',
    })
    .option('compute', {
      type: 'string',
      describe: "model:PRESET: predict each scheme's step on that modeled device (with --model) and say what fits its memory",
    })
    .option('device', { type: 'string', describe: `instead of --compute model:PRESET: ${DEVICE_HELP}` })
    .option('fsdp', { type: 'string', describe: 'an accelerate FSDP config (YAML), read as --deepspeed is; plan shows every scheme, its strategy among them' })
    .option('deepspeed', {
      type: 'string',
      describe:
        "a DeepSpeed config (ds_config.json): its batches, accumulation, buckets, overlap and ZeRO++ as these options; plan shows every scheme, the file's stage among them",
    })
    .option('intra-gbit', {
      type: 'number',
      default: DEFAULT_INTRA_GBIT,
      describe: "with --compute or --run: ring links between ranks of one host (the hybrid's group ring), Gbit/s",
    })
    .option('gbit', {
      type: 'number',
      describe: `with --compute or --run: ring link rate each way, Gbit/s (default ${DEFAULT_GBIT}; with --run, the slowest link its pre-flight measured)`,
    })
    .option('latency-us', { type: 'number', default: 50, describe: 'with --compute or --run: latency per ring step, µs' })
    .option('overlap', { type: 'string', default: 'on', describe: 'with --compute: on (each scheme at its best) or off' })
    .option('bucket-mib', { type: 'number', default: DEFAULT_BUCKET_BYTES / 2 ** 20, describe: 'with --compute: DP and ZeRO-1 gradient bucket cap' })
    .option('chunk-kib', { type: 'number', default: 1024, describe: 'with --compute: collective chunk size' })
    .option('need', {
      type: 'number',
      describe: `with --compute and --hosts: for each scheme, the least link rate between hosts at which exposed communication is at most this % of the step; with --deepspeed and --gbit: what to change in the file to get there (default ${DEFAULT_NEED})`,
    })
    .option('simulate', { type: 'boolean', default: false, describe: "with --need: also search each scheme's least rate with zerowire simulate" })
    .option('check', {
      type: 'boolean',
      default: false,
      describe: "with --need: run the what-if at half, once and twice each answer on lan.sh's namespace LAN (root) and print it beside the prediction",
    })
    .option('check-rate', {
      type: 'string',
      default: '1gbit',
      describe: "with --check: the LAN's shaped link rate; faster rates are reached with --link-scale",
    })
    .option('check-steps', { type: 'number', default: 3, describe: 'with --check: steps per run (the first left out)' })
    .option('hosts', { type: 'number', describe: 'with --need: hosts the --world ranks are spread over (--shard-group: the ranks per host)' })
    .option('emit-deepspeed', {
      type: 'string',
      describe: 'with --deepspeed and --compute: write the changed config plan suggests (the smallest change that fits and meets --need, default 10%) here',
    })
    .option('html', { type: 'string', describe: 'with --need: also write the step against the link rate as a page with its figure here' })
    .option('run', {
      type: 'string',
      describe: "a what-if run's JSON report (--out): its step predicted for --gbit/--latency-us, beside what it measured",
    });
}

/** Every option of `plan`: the states plan's, and a prediction's (whatIfOptions). */
function planOptions<T>(y: Argv<T>) {
  return modelOptions(whatIfOptions(y), true)
    .option('params', { type: 'string', describe: 'parameter count, e.g. 13e9 (or give --model or --hf-config: adds the activations per rank)' })
    .option('batch', {
      type: 'number',
      describe: 'with --model: the global batch (rows, or sequences of SEQ tokens); default 64 rows, or one sequence per rank',
    })
    .option('accumulate', {
      type: 'number',
      default: 1,
      describe: 'micro-batches per optimizer step: adds the fp32 gradient accumulator, activations are one micro-batch',
    })
    .option('shard-group', {
      type: 'number',
      default: 0,
      describe: 'hosts of G ranks: also the hybrid (hsdp: ZeRO-3 within a host, replicas across) and ZeRO++ (zeropp)',
    })
    .option('recompute', {
      type: 'boolean',
      default: false,
      describe: 'with a transformer --model (gpt:, llama:, a named shape): activations with checkpointing per block',
    })
    .option('recompute-regather', RECOMPUTE_REGATHER)
    .option('world', { type: 'number', describe: `number of ranks (also WORLD_SIZE; default ${envWorld ?? 8}, or the --hostfile's slots)` })
    .option('hostfile', { type: 'string', describe: "DeepSpeed's hostfile (HOST slots=N a line): the world, the hosts, a host's ranks as --shard-group" })
    .option('memory', { type: 'string', describe: 'memory per rank, e.g. 80GB' })
    .option('wire-dtype', { choices: ['bf16', 'fp32'] as const, default: 'bf16' as const, describe: 'working copy, gradients and wire: bf16 or fp32' })
    .option('k8s', { type: 'boolean', default: false, describe: "also print a rank container's Kubernetes resources block (deploy/k8s/ranks.yaml)" })
    .option('cpu', { type: 'number', default: 1, describe: 'with --k8s: CPU cores to request per rank' })
    .example('$0 plan --params 13e9 --world 16 --memory 80GB', "each scheme's model states per rank, and whether they fit 80 GB")
    .example('$0 plan --compute model:h100 --model llama2-7b --world 4 --gbit 100', "each scheme's step on H100s joined by 100 Gbit/s links")
    .example('$0 plan --run report.json --gbit 25', "a what-if run's step predicted at 25 Gbit/s, beside what it measured")
    .example(
      '$0 plan --need 10 --compute model:h100 --model llama2-7b --world 32 --hosts 4',
      'the least link rate between 4 hosts each scheme needs to keep exposed communication within 10% of the step',
    );
}

export function planCommand(y: Cli, _exit: (code: number) => void): Cli {
  return y.command(
    'plan',
    'model states per rank for each scheme, and whether they fit',
    (y) => planOptions(y).hide('blas'), // plan computes no products
    async (argv) => {
      if (argv.need !== undefined && !(argv.need > 0 && argv.need < 100))
        throw new RangeError(`--need: ${argv.need} must be a share of the step in percent, above 0 and below 100`);
      const a = withPlanDeepspeed({ ...argv, ...planPlacement(argv, Number(envWorld ?? 8)) });
      if (a.emitDeepspeed !== undefined)
        await checkWritableFile(a.emitDeepspeed, '--emit-deepspeed').catch((err: Error) => Promise.reject(new ConfigError(err.message)));
      // --need with a link given and a DeepSpeed config: what to change at that link (whatIf); else the link it needs
      if (a.need !== undefined && !(a.job && a.gbit !== undefined)) return need({ ...a, need: a.need });
      const needOnly = argv.hosts !== undefined ? '--hosts' : a.html !== undefined ? '--html' : a.check ? '--check' : a.simulate ? '--simulate' : null;
      if (needOnly) throw new ConfigError(`plan: ${needOnly} goes with --need`);
      if (a.run !== undefined || a.compute !== undefined || a.device !== undefined) return whatIf(a);
      const named = a.model !== undefined || a.hfConfig !== undefined;
      if ((a.params === undefined) === !named) throw new ConfigError('plan: give --params or --model (or --hf-config): one of them');
      if (!Number.isInteger(a.world) || a.world < 1) throw new RangeError(`--world: ${a.world} must be a positive integer`);
      const adapt = parseAdapt(a);
      if (adapt && !named) throw new ConfigError('--lora and --freeze: give the --model they adapt (not --params)');
      const parsed = named ? { model: printReading(a).model, adapt } : null;
      if (parsed) checkAdapt(parsed);
      const spec = parsed && modelSpec(parsed);
      const params = spec ? spec.params : parseCount(a.params!, '--params');
      if (!Number.isInteger(a.accumulate) || a.accumulate < 1) throw new RangeError(`--accumulate: ${a.accumulate} must be a positive integer`);
      const batch = a.batch ?? (spec ? defaultBatch(spec, a.world) : 64);
      if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`--batch: ${batch} must be a positive integer`);
      const perRank = Math.ceil(batch / (a.world * a.accumulate)); // rows of one micro-batch
      const bytes = spec?.activationBytes(perRank, a.recompute) ?? 0;
      const activations = spec ? { bytes, model: `${spec.describe()}${a.recompute ? ', --recompute' : ''}`, batch, accumulate: a.accumulate } : undefined;
      if (!(a.cpu > 0)) throw new RangeError(`--cpu: ${a.cpu} must be a positive number of cores`);
      const memory = a.memory === undefined ? undefined : parseBytes(a.memory);
      const G = a.shardGroup;
      checkShardGroup(G, a.world);
      const rows = plan(params, a.world, memory, a.wireDtype, a.accumulate, G, adapt && spec ? (n) => new ShardLayout(spec, n, 0, 'layer').sizes() : undefined);
      print(a, formatPlan(rows, params, a.world, memory, a.wireDtype, activations, a.accumulate));
      if (a.k8s)
        process.stdout.write(
          `\n# for each rank container of deploy/k8s/ranks.yaml (every scheme, one after another):\n${k8sResources(rows, a.cpu, activations?.bytes ?? 0)}\n`,
        );
    },
  );
}

/** The model of --model or --hf-config, a config.json's mapping printed first. */
function printReading(a: ModelArgs): ResolvedModel {
  const r = resolveModel(a);
  if (r.reading) print(a, `${readingText(r)}\n`);
  return r;
}

/** plan's options with a --deepspeed file's settings on them (its table printed first); the stage itself is one
 *  of the schemes plan compares anyway, and the file's ZeRO++ components and prefetch are the configured job's
 *  (plan-change.ts), not every scheme's. `job`: what plan-change reads the file again with. */
function withPlanDeepspeed<T extends ModelArgs & { deepspeed?: string; fsdp?: string; world: number; batch?: number; accumulate: number; wireDtype: string }>(
  a: T,
): T & { job?: Pick<ChangeArgs, 'dsJson' | 'dsContext'> & { raw: T } } {
  if (a.deepspeed === undefined && a.fsdp === undefined) return a;
  if (a.deepspeed !== undefined && a.fsdp !== undefined) throw new ConfigError('--deepspeed and --fsdp: give one of them (one job, one framework)');
  const hidden = a.model === undefined && a.hfConfig === undefined ? null : hiddenOf(resolveModel(a).model);
  const ds = a.deepspeed !== undefined ? withDeepspeed({ ...a, batch: a.batch ?? a.world, lr: 1e-3 }, hidden, a.world) : null;
  const read = ds ?? withFsdp(a, a.world);
  print(a, `${read.text}\n`);
  const { scheme: _s, qwz: _q, hpz: _h, qgz: _g, gatherAhead: _a, ...set } = read.options as T & Settings;
  const job = ds?.json && ds.context ? { raw: a, dsJson: ds.json, dsContext: ds.context } : undefined;
  return { ...a, ...set, job };
}
