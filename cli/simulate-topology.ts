// `simulate`'s network: hosts, the link inside a host (the device's), NICs and their rate, from the options;
// or, with --run, the network a LAN run measured: each host's link rate and round trip from its pre-flight,
// zerowire's own ring as the transport, and the run's config and world.
import type { Report } from '../shared/accounting/report.js';
import { ConfigError, modeledDevice, type RunConfig } from '../shared/control/run-config.js';
import { median } from '../shared/tensor/stats.js';
import { runDevice } from '../shared/whatif/preset.js';
import type { Topology } from '../simulator/network/topology.js';
import { readHostfile } from './hostfile.js';
import { linkRateMbit } from '../shared/transport/link-probe.js';

export interface TopologyArgs {
  hosts?: number;
  hostfile?: string;
  nics: number;
  nicGbit?: number; // default 100
  hopUs: number;
  transport: string;
}

/** Hosts from --hosts, the hostfile, or the shard group (a host's ranks); one host otherwise. */
function hostsOf(a: TopologyArgs, config: RunConfig, world: number): number {
  if (a.hostfile !== undefined) {
    const h = readHostfile(a.hostfile);
    if (a.hosts !== undefined && a.hosts !== h.hosts.length)
      throw new ConfigError(`--hosts ${a.hosts} and --hostfile ${h.path} (${h.hosts.length} hosts) disagree`);
    if (h.perHost === null) throw new ConfigError(`--hostfile ${a.hostfile}: its hosts have different slots; simulate takes hosts of one size`);
    return h.hosts.length;
  }
  if (a.hosts !== undefined) return a.hosts;
  return config.shardGroup > 0 ? world / config.shardGroup : 1;
}

export function topologyFromOptions(a: TopologyArgs, config: RunConfig, world: number): Topology {
  if (!modeledDevice(config)) throw new ConfigError('simulate models the compute: give --compute model:PRESET or --device FILE');
  if (a.transport !== 'nccl' && a.transport !== 'ring') throw new ConfigError(`--transport: "${a.transport}" is not nccl or ring`);
  if (!(a.nics >= 1 && Number.isInteger(a.nics))) throw new ConfigError(`--nics: ${a.nics} must be a whole number of NICs, at least 1`);
  const nicGbit = a.nicGbit ?? 100;
  if (!(nicGbit > 0)) throw new ConfigError(`--nic-gbit: ${nicGbit} must be above 0`);
  if (!(a.hopUs >= 0)) throw new ConfigError(`--hop-us: ${a.hopUs} must be 0 or more`);
  const hosts = hostsOf(a, config, world);
  if (!(Number.isInteger(hosts) && hosts >= 1 && world % hosts === 0)) throw new ConfigError(`--hosts: ${hosts} must divide --world ${world} into whole hosts`);
  const { device } = runDevice(config);
  if (!device.link && world / hosts > 1)
    throw new ConfigError(
      `${device.title} has no link between the GPUs of a host in its datasheet: give --hosts ${world} (one GPU a host), or a --device with its link`,
    );
  const link = device.link ?? { kind: 'PCIe', GBps: 0 };
  const nvlink = /nvlink/i.test(link.kind);
  return {
    hosts,
    perHost: world / hosts,
    transport: a.transport,
    intra: { kind: nvlink ? 'nvlink' : 'pcie', GBps: link.GBps, latencyUs: nvlink ? 0.5 : 1 },
    nics: a.nics,
    nicGBps: nicGbit / 8,
    hopUs: a.hopUs,
    ampere: /a100|a800/i.test(device.name),
    source: `${device.title}'s link from its datasheet`,
  };
}

/** The network a LAN run measured: its hosts as seated, each link's rate (linkRateMbit) and round trip from
 *  its pre-flight. Between hosts the slowest link sets the NIC rate: a ring goes at its pace. `nicGbit`: the
 *  rate between hosts given instead. */
export function topologyFromRun(report: Pick<Report, 'world' | 'ranks' | 'network'>, file: string, nicGbit?: number): Topology {
  const hosts = report.ranks.map((r) => r.host);
  const names = [...new Set(hosts)];
  const perHost = report.world / names.length;
  if (!Number.isInteger(perHost) || hosts.some((h, r) => names.indexOf(h) !== Math.floor(r / perHost)))
    throw new ConfigError(`--run ${file}: its ranks are not seated host by host in equal numbers; simulate takes hosts of one size`);
  const links = report.network?.preflight?.links ?? [];
  if (!links.length) throw new ConfigError(`--run ${file}: its run had no pre-flight (--preflight off): nothing measured the links`);
  const rate = (l: (typeof links)[number]) => linkRateMbit(l, hosts[l.from] !== hosts[l.to]) / 8000; // GB/s
  const cross = links.filter((l) => hosts[l.from] !== hosts[l.to]);
  const inside = links.filter((l) => hosts[l.from] === hosts[l.to]);
  if (names.length > 1 && !cross.length) throw new ConfigError(`--run ${file}: its pre-flight measured no link between hosts`);
  if (nicGbit !== undefined && !(nicGbit > 0)) throw new ConfigError(`--nic-gbit: ${nicGbit} must be above 0`);
  const nicGBps = nicGbit !== undefined ? nicGbit / 8 : cross.length ? Math.min(...cross.map(rate)) : 1;
  return {
    hosts: names.length,
    perHost,
    transport: 'ring',
    intra: {
      kind: 'loopback',
      // one rate stands for every host's loopback; equal hosts' probes differ by what their cores were doing
      // (2.2-5.8 Gbit/s on one 4 x 2 lan.sh run), so the typical one, not the unluckiest
      GBps: inside.length ? median(inside.map(rate)) : 1,
      latencyUs: inside.length ? (median(inside.map((l) => l.rttMs)) * 1000) / 2 : 0,
    },
    nics: 1,
    nicGBps,
    hopUs: cross.length ? (median(cross.map((l) => l.rttMs)) * 1000) / 2 : 0,
    ampere: false,
    source: `rates and round trips from ${file}'s pre-flight${nicGbit !== undefined ? ` (between hosts: --nic-gbit ${nicGbit})` : ''}`,
  };
}
