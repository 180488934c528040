// DeepSpeed's offload as options (training/schemes/offload.ts): --offload optimizer[,params], --offload-dpu and
// --host-adam-gparams, one definition for every command that takes them, parsed with errors naming the option.
import type { Argv } from 'yargs';
import { ConfigError, modeledDevice, type RunConfig, type SchemeName } from '../shared/control/run-config.js';
import { hostAdamGparams } from '../shared/whatif/host-adam.js';
import { modelSpec } from '../shared/models/registry.js';
import { schemeRefusal } from '../shared/training/schemes/table.js';

export function offloadOptions<T>(y: Argv<T>) {
  return y
    .option('offload', {
      type: 'string',
      describe:
        "optimizer: the fp32 masters and Adam's moments in host memory, Adam run there (DeepSpeed's offload_optimizer; ZeRO-1/2/3); optimizer,params: ZeRO-3's 16-bit shard there too (offload_param)",
    })
    .option('offload-dpu', {
      type: 'boolean',
      describe: "with --offload: the update delayed one step, as ZeRO-Offload's DPU (a step's passes use the weights from before the last update)",
    })
    .option('host-adam-gparams', {
      type: 'number',
      describe: "with --offload on a modeled device: the host's Adam rate, 10^9 parameters a second per rank (default: measured on this host)",
    });
}

export interface OffloadOptions {
  offload?: string;
  offloadDpu?: boolean;
  hostAdamGparams?: number;
}

/** A modeled run's offload with the host's Adam rate: as given, or measured on this host for a rank's shard of
 *  the model over `world` ranks, `ranksPerHost` of them sharing a host's cores. */
export function withHostAdamRate(config: RunConfig, world: number, ranksPerHost: number): RunConfig {
  const off = config.offload;
  if (!off || off.hostAdamGparams !== undefined || !modeledDevice(config)) return config;
  const r = hostAdamGparams(modelSpec(config).params / Math.max(1, world), ranksPerHost);
  const how = `measured here: ${r.perCore.toFixed(2)}e9 parameters/s on a core, ${r.cores} cores shared by ${ranksPerHost} ranks`;
  return { ...config, offload: { ...off, hostAdamGparams: r.gparams, hostAdamMeasured: how } };
}

/** The offload asked for, checked against the run's schemes, or undefined. */
export function parseOffload(o: OffloadOptions, c: Pick<RunConfig, 'schemes' | 'adapt' | 'zeropp'>): RunConfig['offload'] {
  const rest = [o.offloadDpu && '--offload-dpu', o.hostAdamGparams !== undefined && '--host-adam-gparams'].filter(Boolean);
  if (o.offload === undefined) {
    if (rest.length) throw new ConfigError(`${rest.join(' and ')}: only with --offload optimizer (what they change)`);
    return undefined;
  }
  const parts = String(o.offload)
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);
  const bad = parts.filter((p) => p !== 'optimizer' && p !== 'params');
  if (bad.length || !parts.length) throw new ConfigError(`--offload: "${o.offload}" is not optimizer or optimizer,params`);
  if (!parts.includes('optimizer'))
    throw new ConfigError('--offload params: parameters are offloaded with the optimizer (optimizer,params), as DeepSpeed offloads them');
  if (o.hostAdamGparams !== undefined && !(o.hostAdamGparams > 0))
    throw new ConfigError(`--host-adam-gparams: ${o.hostAdamGparams} must be a positive rate (10^9 parameters a second)`);
  const offload = { params: parts.includes('params'), dpu: !!o.offloadDpu, ...(o.hostAdamGparams !== undefined ? { hostAdamGparams: o.hostAdamGparams } : {}) };
  for (const s of c.schemes as SchemeName[]) {
    const why = schemeRefusal(s, { ...c, offload });
    if (why) throw new ConfigError(`--offload ${o.offload} with --scheme ${s}: ${why}`);
  }
  return offload;
}
