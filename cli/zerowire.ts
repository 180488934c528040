#!/usr/bin/env node
// The one entry point: zerowire coordinator | rank | local | plan. Every option can also come from an
// environment variable ZEROWIRE_<OPTION> (e.g. ZEROWIRE_COORDINATOR, ZEROWIRE_WORLD); WORLD_SIZE is read
// for --world like torchrun does.
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runCoordinatorJob } from '../coordinator/main.js';
import { runRank } from '../rank/main.js';
import { checkWorld, ConfigError, DEFAULT_MODEL, makeRunConfig, parseModel, parseWidths, type RunOptions } from '../shared/control/run-config.js';
import { modelSpec } from '../shared/training/model.js';
import { parseBytes, parseCount } from '../shared/accounting/units.js';
import { LIVENESS } from '../shared/transport/liveness.js';
import { createLogger, LOG_LEVELS } from './log.js';
import { runLocal } from './local.js';
import { rankIdentity } from './platform-env.js';
import { runProcs, withoutProcs } from '../rank/procs.js';
import { fileURLToPath } from 'node:url';
import { formatPlan, k8sResources, plan } from './plan.js';
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { consolidate, latestIndex } from '../shared/io/checkpoint.js';
import { serializeSafetensors, writeFileAtomic } from '../shared/io/safetensors.js';
import { BIND_EXIT_CODE, BindError } from '../shared/transport/bind-error.js';

const envWorld = process.env.WORLD_SIZE;

function parseWorld(text: string, allowAuto: boolean): number | 'auto' {
  if (allowAuto && text === 'auto') return 'auto';
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`--world: "${text}" must be a positive integer${allowAuto ? " or 'auto'" : ''}`);
  return n;
}

function runOptions<T>(y: Argv<T>) {
  return y
    .option('world', {
      type: 'string',
      default: envWorld ?? '4',
      describe: "number of ranks (also WORLD_SIZE); coordinator: 'auto' settles on the ranks that join",
    })
    .option('scheme', { type: 'string', default: 'all', describe: 'dp|zero1|zero2|zero3|all, or a comma list' })
    .option('model', { type: 'string', default: DEFAULT_MODEL, describe: 'MLP layer widths, input first' })
    .option('steps', { type: 'number', default: 20 })
    .option('batch', { type: 'number', default: 64, describe: 'global batch; each rank takes batch/world rows' })
    .option('lr', { type: 'number', default: 1e-3 })
    .option('seed', { type: 'number', default: 0 })
    .option('samples', { type: 'number', default: 4096, describe: 'size of the synthetic data set' })
    .option('wire-dtype', { choices: ['bf16', 'fp32'], default: 'bf16', describe: 'working copy, gradients and wire: bf16 (mixed precision) or fp32 (exact)' })
    .option('unit', { choices: ['layer', 'model'], default: 'layer', describe: 'granularity of a gather and of a gradient bucket' })
    .option('compute', {
      choices: ['auto', 'inline', 'thread'],
      default: 'auto',
      describe:
        "where forward/backward run: the rank's event loop, or a worker thread so communication overlaps (auto: thread when gathering ahead or reducing behind)",
    })
    .option('threads', {
      type: 'string',
      default: '1',
      describe: "threads computing each rank's products, like PyTorch's intra-op threads (auto: this host's cores over its ranks)",
    })
    .option('recompute', {
      type: 'boolean',
      default: false,
      describe: "GPT: activation checkpointing per block (keep each block's output, recompute its insides in the backward pass)",
    })
    .option('gather-ahead', { type: 'number', describe: 'ZeRO-3: gather this many units ahead of the one computing (0, 1, 2; default 0)' })
    .option('reduce-behind', {
      type: 'number',
      describe: "ZeRO-2/3: let this many units' gradient reduce-scatters run behind the backward pass (0, 1, 2; default 0)",
    })
    .option('prefetch', { type: 'number', describe: 'both --gather-ahead and --reduce-behind (the older name for the two)' })
    .option('chunk-kib', { type: 'number', default: 1024, describe: 'collective chunk size' })
    .option('timeout', { type: 'number', default: 60, describe: 'seconds a collective or ring set-up may wait' })
    .option('join-timeout', { type: 'number', default: 120, describe: 'seconds to wait for all ranks to join' })
    .option('max-rank-memory', { type: 'string', describe: 'refuse schemes whose per-rank peak exceeds this, e.g. 2GB' })
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

type RunArgv = RunOptions & {
  checkpointEvery?: number;
  checkpointDir?: string;
  resume?: string;
  world: string;
  joinTimeout: number;
  maxRankMemory?: string;
  out?: string;
  trace?: string;
  html?: string;
  dump?: string;
  logLevel: string;
  token?: string;
  tokenFile?: string;
  heartbeatTimeout: number;
};

function readPem(path: string, option: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${option} ${path}: ${(err as Error).message}`);
  }
}

/** The join token from --token or from a file (a Docker or Kubernetes secret), never both. */
function joinToken(token: string | undefined, file: string | undefined): string | undefined {
  if (file === undefined) return token;
  if (token !== undefined) throw new ConfigError('--token and --token-file (or ZEROWIRE_TOKEN and ZEROWIRE_TOKEN_FILE) both given: use one');
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/\s+$/, '');
  } catch (err) {
    throw new ConfigError(`--token-file ${file}: ${(err as Error).message}`);
  }
  if (!text) throw new ConfigError(`--token-file ${file}: the file is empty`);
  return text;
}

function straggle(ms: number): number {
  if (!(Number.isFinite(ms) && ms >= 0)) throw new ConfigError(`--straggle-ms: ${ms} must be a number of milliseconds >= 0`);
  return ms;
}

function heartbeat(seconds: number) {
  if (!(seconds > 0)) throw new ConfigError(`--heartbeat-timeout: ${seconds} must be a positive number of seconds`);
  return { heartbeatTimeoutMs: Math.round(seconds * 1000) };
}

function jobOptions(a: RunArgv, host: string, port: number, allowAuto: boolean) {
  const config = makeRunConfig(a);
  if ((a.checkpointEvery === undefined) !== (a.checkpointDir === undefined)) throw new ConfigError('--checkpoint-every and --checkpoint-dir go together');
  if (a.checkpointEvery !== undefined) {
    if (!Number.isInteger(a.checkpointEvery) || a.checkpointEvery < 1)
      throw new ConfigError(`--checkpoint-every: ${a.checkpointEvery} must be a positive integer`);
    config.checkpoint = { every: a.checkpointEvery, dir: resolve(a.checkpointDir!) };
  }
  const world = parseWorld(a.world, allowAuto);
  if (world !== 'auto') checkWorld(config, world);
  return {
    host,
    port,
    world,
    config,
    resumeDir: a.resume === undefined ? undefined : resolve(a.resume),
    token: joinToken(a.token, a.tokenFile),
    ...heartbeat(a.heartbeatTimeout),
    joinTimeoutMs: a.joinTimeout * 1000,
    maxRankMemory: a.maxRankMemory === undefined ? undefined : parseBytes(a.maxRankMemory),
    out: a.out,
    trace: a.trace,
    html: a.html,
    dump: a.dump,
  };
}

async function main(): Promise<number> {
  let exitCode = 0;
  await yargs(hideBin(process.argv))
    .scriptName('zerowire')
    .env('ZEROWIRE')
    .option('log-level', { choices: LOG_LEVELS, default: 'info', global: true })
    .command(
      'coordinator',
      'wait for --world ranks, run the schemes, print the report',
      (y) =>
        runOptions(y)
          .option('port', { type: 'number', default: 7070 })
          .option('host', { type: 'string', default: '0.0.0.0' })
          .option('discover', {
            type: 'string',
            describe: "a DNS name with one address per rank (the compose service 'rank', Swarm's tasks.rank): auto waits for all of them",
          })
          .option('min-world', {
            type: 'number',
            describe:
              "if fewer than --world ranks joined in time, run with them when at least this many did (a warning says so); 'auto' never settles below 2 unless this is 1",
          })
          .option('settle', { type: 'number', default: 3, describe: 'with --world auto: seconds without a new rank before the run starts' })
          .option('tls-cert', { type: 'string', describe: 'PEM certificate: serve wss:// (with --tls-key)' })
          .option('tls-key', { type: 'string', describe: 'PEM private key for --tls-cert' }),
      async (a) => {
        const log = createLogger(a.logLevel, 'coordinator');
        if ((a.tlsCert === undefined) !== (a.tlsKey === undefined)) throw new ConfigError('--tls-cert and --tls-key go together');
        const tls = a.tlsCert ? { cert: readPem(a.tlsCert, '--tls-cert'), key: readPem(a.tlsKey!, '--tls-key') } : undefined;
        if (a.minWorld !== undefined && !(Number.isInteger(a.minWorld) && a.minWorld >= 1))
          throw new ConfigError(`--min-world: ${a.minWorld} must be a positive integer`);
        exitCode = await runCoordinatorJob(
          { ...jobOptions(a as unknown as RunArgv, a.host, a.port, true), discover: a.discover, settleMs: a.settle * 1000, minWorld: a.minWorld, tls },
          log,
        );
      },
    )
    .command(
      'rank',
      'join a coordinator and train',
      (y) =>
        y
          .option('coordinator', { type: 'string', describe: 'ws://HOST:PORT of the coordinator (or MASTER_ADDR and MASTER_PORT)' })
          .option('rank-id', {
            type: 'number',
            describe: 'ask for this rank id (or RANK, or JOB_COMPLETION_INDEX); the coordinator refuses a second rank asking for it',
          })
          .option('host-id', { type: 'string', describe: "this rank's host, for ordering the ring so ranks of one host are neighbours (default: its address)" })
          .option('procs', { type: 'number', default: 1, describe: 'start this many rank processes on this host' })
          .option('advertise', { type: 'string', describe: 'address other ranks should dial (default: what the coordinator sees)' })
          .option('peer-host', { type: 'string', default: '0.0.0.0', describe: 'interface to listen on for the ring' })
          .option('peer-port', {
            type: 'number',
            default: 0,
            describe: 'port to listen on for the ring (0: any free port); with --procs K, the first of K consecutive ports',
          })
          .option('connect-timeout', { type: 'number', default: 60, describe: 'seconds to keep retrying the coordinator' })
          .option('max-rank-memory', { type: 'string', describe: "refuse to run if this rank's peak would exceed this, e.g. 8GB" })
          .option('iface', { type: 'string', describe: "report this network interface's kernel byte counters ('auto': the one the ring uses)" })
          .option('token', { type: 'string', describe: 'join token the coordinator requires (prefer ZEROWIRE_TOKEN)' })
          .option('token-file', { type: 'string', describe: 'read the join token from this file (a Docker or Kubernetes secret)' })
          .option('model', { type: 'string', describe: 'join only a run that trains this model (layer widths)' })
          .option('heartbeat-timeout', {
            type: 'number',
            default: LIVENESS.timeoutMs / 1000,
            describe:
              'seconds of silence from the coordinator or a ring peer after which this rank gives up, on a quiet link (the limit adapts up to 10/3 of this)',
          })
          .option('tls-ca', { type: 'string', describe: 'PEM certificate to trust for a wss:// coordinator (e.g. its self-signed certificate)' })
          .option('straggle-ms', {
            type: 'number',
            default: 0,
            describe: "make this rank a straggler: idle this long before every step (the others' time lands in the report's wait column)",
          }),
      async (a) => {
        const log = createLogger(a.logLevel, 'rank');
        if (!Number.isInteger(a.procs) || a.procs < 1 || a.procs > 256) throw new ConfigError(`--procs: ${a.procs} must be an integer from 1 to 256`);
        const id = rankIdentity({ coordinator: a.coordinator, rankId: a.rankId }, process.env);
        if (a.procs > 1) {
          if (id.rankId !== undefined)
            throw new ConfigError(`--procs ${a.procs} with a rank id (${id.rankId}): each process needs its own id; start them one by one`);
          exitCode = await runProcs(a.procs, a.peerPort, fileURLToPath(import.meta.url), withoutProcs(hideBin(process.argv)), log);
          return;
        }
        exitCode = await runRank(
          {
            coordinator: id.coordinator,
            rankId: id.rankId,
            worldSize: id.worldSize,
            hostId: a.hostId,
            advertise: a.advertise,
            peerHost: a.peerHost,
            peerPort: a.peerPort,
            connectTimeoutMs: a.connectTimeout * 1000,
            maxRankMemory: a.maxRankMemory === undefined ? undefined : parseBytes(a.maxRankMemory),
            iface: a.iface,
            token: joinToken(a.token, a.tokenFile),
            tlsCa: a.tlsCa === undefined ? undefined : readPem(a.tlsCa, '--tls-ca'),
            straggleMs: straggle(a.straggleMs),
            model: a.model === undefined ? undefined : parseWidths(a.model),
            ...heartbeat(a.heartbeatTimeout),
          },
          log,
        );
      },
    )
    .command(
      'local',
      'a coordinator and --world rank processes on this machine',
      (y) => runOptions(y),
      async (a) => {
        const log = createLogger(a.logLevel, 'local');
        const job = jobOptions(a as unknown as RunArgv, '127.0.0.1', 0, false);
        exitCode = await runLocal({ ...job, world: job.world as number, logLevel: a.logLevel, rankArgs: [] }, log);
      },
    )
    .command(
      'consolidate',
      'write the full model of a sharded checkpoint as one safetensors file (torch names)',
      (y) =>
        y
          .option('dir', { type: 'string', demandOption: true, describe: 'the --checkpoint-dir of the run' })
          .option('scheme', { choices: ['dp', 'zero1', 'zero2', 'zero3'] as const, demandOption: true })
          .option('out', { type: 'string', demandOption: true, describe: 'where to write model.safetensors' }),
      async (a) => {
        const { index } = await latestIndex(a.dir, a.scheme);
        if (!index) throw new ConfigError(`--dir ${a.dir}: no complete ${a.scheme} checkpoint (a checkpoint is complete once its index.json exists)`);
        await writeFileAtomic(
          a.out,
          serializeSafetensors(await consolidate(a.dir, index), { scheme: index.scheme, step: String(index.step), model: index.model.join(',') }),
        );
        process.stdout.write(`${a.out}: ${index.scheme} at step ${index.step}, ${index.world} shards, model ${index.model.join(',')}\n`);
      },
    )
    .command(
      'plan',
      'model states per rank for each scheme, and whether they fit',
      (y) =>
        y
          .option('params', { type: 'string', describe: 'parameter count, e.g. 13e9 (or give --model)' })
          .option('model', { type: 'string', describe: 'a model instead: MLP widths, or gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB] (adds the activations per rank)' })
          .option('batch', { type: 'number', default: 64, describe: 'with --model: the global batch (rows, or sequences of SEQ tokens)' })
          .option('recompute', { type: 'boolean', default: false, describe: 'with a GPT --model: activations with checkpointing per block' })
          .option('world', { type: 'number', default: Number(envWorld ?? 8) })
          .option('memory', { type: 'string', describe: 'memory per rank, e.g. 80GB' })
          .option('wire-dtype', { choices: ['bf16', 'fp32'] as const, default: 'bf16' as const })
          .option('k8s', { type: 'boolean', default: false, describe: "also print a rank container's Kubernetes resources block (deploy/k8s/ranks.yaml)" })
          .option('cpu', { type: 'number', default: 1, describe: 'with --k8s: CPU cores to request per rank' }),
      (a) => {
        if ((a.params === undefined) === (a.model === undefined)) throw new ConfigError('plan: give --params or --model (one of them)');
        if (!Number.isInteger(a.world) || a.world < 1) throw new RangeError(`--world: ${a.world} must be a positive integer`);
        if (!Number.isInteger(a.batch) || a.batch < 1) throw new RangeError(`--batch: ${a.batch} must be a positive integer`);
        const spec = a.model === undefined ? null : modelSpec(parseModel(a.model));
        const params = spec ? spec.params : parseCount(a.params!, '--params');
        const perRank = Math.ceil(a.batch / a.world);
        const bytes = spec?.activationBytes(perRank, a.recompute) ?? 0;
        const activations = spec ? { bytes, model: `${spec.describe()}${a.recompute ? ', --recompute' : ''}`, batch: a.batch } : undefined;
        if (!(a.cpu > 0)) throw new RangeError(`--cpu: ${a.cpu} must be a positive number of cores`);
        const memory = a.memory === undefined ? undefined : parseBytes(a.memory);
        const rows = plan(params, a.world, memory, a.wireDtype);
        process.stdout.write(`${formatPlan(rows, params, a.world, memory, a.wireDtype, activations)}\n`);
        if (a.k8s)
          process.stdout.write(
            `\n# for each rank container of deploy/k8s/ranks.yaml (every scheme, one after another):\n${k8sResources(rows, a.cpu, activations?.bytes ?? 0)}\n`,
          );
      },
    )
    .demandCommand(1, 'name a command: coordinator, rank, local, plan or consolidate')
    .strict()
    .fail((msg, err) => {
      // Bad usage and bad option values exit 2; anything else is a runtime failure (exit 1).
      if (err && !(err instanceof ConfigError || err instanceof RangeError)) throw err;
      throw new UsageError(err ? err.message : msg);
    })
    .help()
    .parseAsync();
  return exitCode;
}

class UsageError extends Error {}

main().then(
  (code) => process.exit(code),
  (err) => {
    const usage = err instanceof UsageError || err instanceof ConfigError || err instanceof RangeError;
    process.stderr.write(`zerowire: ${(err as Error).message}${usage ? '\n(see zerowire --help, or zerowire COMMAND --help)' : ''}\n`);
    process.exit(usage ? 2 : err instanceof BindError ? BIND_EXIT_CODE : 1);
  },
);
