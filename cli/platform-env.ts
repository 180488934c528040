// What a rank takes from the environment that launchers already set: torchrun and Kubeflow's PyTorchJob
// set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX.
// Where two sources say different things, the rank refuses to start rather than guess.
import { ConfigError } from '../shared/control/run-config.js';

export interface RankIdentity {
  coordinator: string;
  rankId?: number;
  worldSize?: number;
}

const DEFAULT_PORT = 7070;

function count(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min) throw new ConfigError(`${name}=${text}: expected an integer >= ${min}`);
  return n;
}

/** `flags`: what the command line (or ZEROWIRE_* variables) said; `env`: the process environment. */
/** `tls`: the rank runs TLS (--tls-cert), so MASTER_ADDR means wss://, and a ws:// --coordinator is a mistake. */
export function rankIdentity(flags: { coordinator?: string; rankId?: number; tls?: boolean }, env: NodeJS.ProcessEnv): RankIdentity {
  const ids: [string, number][] = [];
  if (flags.rankId !== undefined) ids.push(['--rank-id', count('--rank-id', String(flags.rankId), 0)]);
  for (const name of ['RANK', 'JOB_COMPLETION_INDEX']) if (env[name] !== undefined && env[name] !== '') ids.push([name, count(name, env[name], 0)]);
  const disagree = ids.find(([, id]) => id !== ids[0][1]);
  if (disagree) throw new ConfigError(`rank id: ${ids.map(([name, id]) => `${name}=${id}`).join(' and ')} disagree; set one of them`);

  const worldSize = env.WORLD_SIZE !== undefined && env.WORLD_SIZE !== '' ? count('WORLD_SIZE', env.WORLD_SIZE, 1) : undefined;
  if (ids.length && worldSize !== undefined && ids[0][1] >= worldSize)
    throw new ConfigError(`rank id ${ids[0][1]} (${ids[0][0]}) is not below WORLD_SIZE=${worldSize}`);

  let fromMaster: string | undefined;
  if (env.MASTER_ADDR) {
    const port = env.MASTER_PORT ? count('MASTER_PORT', env.MASTER_PORT, 1) : DEFAULT_PORT;
    const host = env.MASTER_ADDR.includes(':') ? `[${env.MASTER_ADDR}]` : env.MASTER_ADDR;
    fromMaster = `${flags.tls ? 'wss' : 'ws'}://${host}:${port}`;
  } else if (env.MASTER_PORT) throw new ConfigError('MASTER_PORT is set without MASTER_ADDR');
  const sameAddress = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
  if (flags.coordinator && fromMaster && !sameAddress(flags.coordinator, fromMaster))
    throw new ConfigError(`--coordinator ${flags.coordinator} and MASTER_ADDR/MASTER_PORT (${fromMaster}) disagree; set one of them`);
  const coordinator = flags.coordinator ?? fromMaster;
  if (!coordinator) throw new ConfigError('--coordinator is required (or MASTER_ADDR and MASTER_PORT, as torchrun and PyTorchJob set them)');
  const url = URL.canParse(coordinator) ? new URL(coordinator) : null;
  if (!url || !/^wss?:$/.test(url.protocol) || !url.hostname)
    throw new ConfigError(`--coordinator ${coordinator}: not a ws:// or wss:// address (e.g. ws://10.0.0.1:7070)`);
  if (flags.tls && /^ws:\/\//i.test(coordinator))
    throw new ConfigError(`--coordinator ${coordinator}: this rank runs TLS (--tls-cert), so the coordinator is wss://, not ws://`);
  return { coordinator, rankId: ids[0]?.[1], worldSize };
}
