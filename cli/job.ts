// A run command's options turned into the coordinator's job: the run config, checkpoints, files, liveness,
// checked once here, with errors that name the option.
import { screenWidth } from '../shared/io/screen.js';
import { resolve } from 'node:path';
import { checkWorld, ConfigError, modeledDevice, type RunConfig } from '../shared/control/run-config.js';
import { checkRecompute, modelSpec } from '../shared/models/registry.js';
import { resolveHybrid } from '../shared/training/schemes/world-fit.js';
import { deviceNamed } from '../shared/whatif/devices.js';
import { makeRunConfig, type RunOptions } from './run-config-options.js';
import { withHostAdamRate } from './offload-options.js';
import { resolveModel } from './model-options.js';
import { hiddenOf, withDeepspeed } from './deepspeed.js';
import { withFsdp } from './fsdp.js';
import { readHostfile, worldOf } from './hostfile.js';
import { envWorld } from './options.js';
import { joinToken } from './secrets.js';
import { parseBytes } from './sizes.js';

function parseWorld(text: string, allowAuto: boolean): number | 'auto' {
  if (allowAuto && text === 'auto') return 'auto';
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`--world: "${text}" must be a positive integer${allowAuto ? " or 'auto'" : ''}`);
  return n;
}

export type RunArgv = RunOptions & {
  checkpointEvery?: number;
  checkpointDir?: string;
  resume?: string;
  world?: string; // default: WORLD_SIZE, or 4
  hostfile?: string; // the coordinator's: its slots are the world
  joinTimeout: number;
  maxRankMemory?: string;
  out?: string;
  trace?: string;
  html?: string;
  dump?: string;
  logLevel: string;
  wide: boolean;
  token?: string;
  tokenFile?: string;
  heartbeatTimeout: number;
};

export function straggle(ms: number): number {
  if (!(Number.isFinite(ms) && ms >= 0)) throw new ConfigError(`--straggle-ms: ${ms} must be a number of milliseconds >= 0`);
  return ms;
}

export function heartbeat(seconds: number) {
  if (!(seconds > 0)) throw new ConfigError(`--heartbeat-timeout: ${seconds} must be a positive number of seconds`);
  return { heartbeatTimeoutMs: Math.round(seconds * 1000) };
}

/** --checkpoint-every and --checkpoint-dir into the config, checked. */
function addCheckpoints(config: RunConfig, a: Pick<RunArgv, 'checkpointEvery' | 'checkpointDir' | 'resume'>): void {
  if ((a.checkpointEvery === undefined) !== (a.checkpointDir === undefined)) throw new ConfigError('--checkpoint-every and --checkpoint-dir go together');
  if (a.checkpointEvery !== undefined) {
    if (!Number.isInteger(a.checkpointEvery) || a.checkpointEvery < 1)
      throw new ConfigError(`--checkpoint-every: ${a.checkpointEvery} must be a positive integer`);
    config.checkpoint = { every: a.checkpointEvery, dir: resolve(a.checkpointDir!) };
  }
  if (config.offload?.dpu && (config.checkpoint || a.resume !== undefined))
    throw new ConfigError(
      '--offload-dpu: its working copy is a step behind its masters, which checkpoints do not hold yet: drop --checkpoint-every or --resume',
    );
}

export function jobOptions(argv: RunArgv, host: string, port: number, allowAuto: boolean) {
  const model = resolveModel(argv);
  const given = argv.hostfile === undefined ? argv.world : String(worldOf(readHostfile(argv.hostfile), argv.world));
  const world = parseWorld(given ?? envWorld ?? '4', allowAuto);
  if ((argv.deepspeed ?? argv.fsdp) !== undefined && world === 'auto')
    throw new ConfigError(`${argv.deepspeed !== undefined ? '--deepspeed' : '--fsdp'} with --world auto: give the world (its sizes are per GPU)`);
  if (argv.deepspeed !== undefined && argv.fsdp !== undefined) throw new ConfigError('--deepspeed and --fsdp: give one of them (one job, one framework)');
  const ds = withDeepspeed(argv, hiddenOf(model.model), world === 'auto' ? 0 : world);
  const fsdp = withFsdp(ds.options, world === 'auto' ? 0 : world);
  const a = fsdp.options;
  // a modeled offload's host Adam rate, measured here where not given, its ranks sharing this host's cores
  const config = withHostAdamRate(makeRunConfig(a, model), world === 'auto' ? 1 : world, world === 'auto' ? 1 : world);
  const recompute = checkRecompute(modelSpec(config), config.recompute);
  if (recompute) throw new ConfigError(recompute);
  addCheckpoints(config, a);
  const device = modeledDevice(config);
  if (device) {
    if (!config.device) deviceNamed(device); // an unknown preset is refused with the list of known ones
    // Modeled compute has no values to save, resume or dump.
    const valueOptions = [
      config.checkpoint && '--checkpoint-every/--checkpoint-dir',
      a.resume !== undefined && '--resume',
      a.dump !== undefined && '--dump',
    ].filter(Boolean);
    if (valueOptions.length) throw new ConfigError(`--compute ${config.compute} models compute and holds no values: drop ${valueOptions.join(', ')}`);
  }
  if (world !== 'auto') {
    checkWorld(config, world);
    // HSDP with groups given by size can be checked now; groups by host wait for the hosts to join.
    if (config.shardGroup > 0) {
      try {
        resolveHybrid(config, Array<string>(world).fill(''));
      } catch (err) {
        throw new ConfigError((err as Error).message);
      }
    }
  }
  return {
    host,
    port,
    world,
    config,
    model, // how it was named, and a config.json's mapping (printed before the run)
    deepspeed: ds.text ?? fsdp.text, // a DeepSpeed or FSDP config's mapping (printed before the run), or null
    resumeDir: a.resume === undefined ? undefined : resolve(a.resume),
    token: joinToken(a.token, a.tokenFile),
    ...heartbeat(a.heartbeatTimeout),
    joinTimeoutMs: a.joinTimeout * 1000,
    maxRankMemory: a.maxRankMemory === undefined ? undefined : parseBytes(a.maxRankMemory),
    out: a.out,
    trace: a.trace,
    html: a.html,
    dump: a.dump,
    width: screenWidth(a.wide), // the report's: a terminal's columns, else whole lines
  };
}
