// --hostfile PATH in DeepSpeed's format: one host per line, `worker-1 slots=8` (slots: its GPUs), `#` comments.
// It says how many ranks a job has and how they sit on hosts: `plan`'s world, hosts and shard group (a host's
// ranks), and the coordinator's expected world.
import { readText } from '../shared/io/json-file.js';
import { ConfigError } from '../shared/control/run-config.js';

export interface Hostfile {
  path: string;
  hosts: { name: string; slots: number }[];
  world: number;
  /** The ranks every host has, or null where hosts differ. */
  perHost: number | null;
}

export function parseHostfile(text: string, path: string): Hostfile {
  const hosts: Hostfile['hosts'] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) return;
    const m = /^(\S+)(?:\s+slots\s*=\s*(\d+))?$/.exec(line);
    if (!m) throw new ConfigError(`--hostfile ${path} line ${i + 1}: "${raw.trim()}" is not HOST slots=N`);
    const slots = m[2] === undefined ? 1 : Number(m[2]);
    if (slots < 1) throw new ConfigError(`--hostfile ${path} line ${i + 1}: slots=${m[2]} must be at least 1`);
    if (hosts.some((h) => h.name === m[1])) throw new ConfigError(`--hostfile ${path} line ${i + 1}: host ${m[1]} is listed twice`);
    hosts.push({ name: m[1], slots });
  });
  if (!hosts.length) throw new ConfigError(`--hostfile ${path}: no host in it (lines of HOST slots=N)`);
  const slots = new Set(hosts.map((h) => h.slots));
  return { path, hosts, world: hosts.reduce((t, h) => t + h.slots, 0), perHost: slots.size === 1 ? hosts[0].slots : null };
}

export function readHostfile(path: string): Hostfile {
  return parseHostfile(readText(path, '--hostfile'), path);
}

/** The world a hostfile gives, checked against a --world given too. */
export function worldOf(h: Hostfile, given: number | string | undefined): number {
  if (given !== undefined && String(given) !== String(h.world))
    throw new ConfigError(`--world ${given} and --hostfile ${h.path} disagree: its ${h.hosts.length} hosts have ${h.world} slots`);
  return h.world;
}

/** `plan`'s placement from a hostfile: the world, the hosts (where every host has as many ranks), and the
 *  shard group of a host's ranks unless --shard-group is given. */
export function planPlacement(o: { hostfile?: string; world?: number; hosts?: number; shardGroup: number }, fallbackWorld: number) {
  if (o.hostfile === undefined) return { world: o.world ?? fallbackWorld, hosts: o.hosts, shardGroup: o.shardGroup };
  const h = readHostfile(o.hostfile);
  const world = worldOf(h, o.world);
  if (o.hosts !== undefined && o.hosts !== h.hosts.length)
    throw new ConfigError(`--hosts ${o.hosts} and --hostfile ${h.path} (${h.hosts.length} hosts) disagree`);
  const byHost = h.perHost !== null && h.perHost >= 2 && h.hosts.length >= 2 ? h.perHost : 0;
  return { world, hosts: h.perHost !== null ? h.hosts.length : undefined, shardGroup: o.shardGroup || byHost };
}
