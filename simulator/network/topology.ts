// The simulated machines: hosts of GPUs (or, validating against the namespace LAN, of rank processes), the link
// between the GPUs of a host, NICs per host and their rate, latency per hop. Ranks fill hosts in order, as the
// coordinator seats them (coordinator/ring-order.ts). Two transports: NCCL's (its algorithm and protocol per
// collective, nccl-tuning.ts) and zerowire's own (a flat ring over TCP, what a LAN run measured).
import type { CommGraph } from './nccl-tuning.js';

export interface Topology {
  hosts: number;
  perHost: number; // ranks (GPUs) per host
  transport: 'nccl' | 'ring';
  intra: { kind: 'nvlink' | 'pcie' | 'loopback'; GBps: number; latencyUs: number }; // per rank, one direction
  nics: number; // per host
  nicGBps: number; // each, one direction
  hopUs: number; // one hop between hosts (ring: half the round trip the pre-flight measured)
  burstKiB?: number; // ring: each host's link a token bucket of this burst at its rate (lan.sh's tbf: 256)
  ampere: boolean; // NCCL's 235 GB/s cap on compute capability 8.0
  /** Where the numbers came from, for the report. */
  source: string;
}

export const hostOf = (t: Topology, rank: number) => Math.floor(rank / t.perHost);

/** How a group of ranks lies over the hosts: the hosts it touches and its ranks on each. */
export function spread(t: Topology, members: readonly number[]): Map<number, number> {
  const on = new Map<number, number>();
  for (const r of members) on.set(hostOf(t, r), (on.get(hostOf(t, r)) ?? 0) + 1);
  return on;
}

/** What NCCL's graph search finds for a communicator over `members`: channels and their speed. Within a host,
 *  NCCL's own per-link NVLink figures come to about 0.82 of the datasheet's (H100: 18 links of 20.6 GB/s
 *  against 450) and it runs up to 16 channels; across hosts, two channels per NIC its ranks can use (one NIC
 *  per GPU at most), at the NICs' rate, no faster than the link inside the host. */
export function commGraph(t: Topology, members: readonly number[]): CommGraph {
  const on = spread(t, members);
  const nNodes = on.size;
  const ppn = Math.max(...on.values());
  const intraUsable = usableIntra(t);
  const nvlink = t.intra.kind === 'nvlink';
  if (nNodes === 1) {
    const nChannels = nvlink ? 16 : 2;
    return {
      nRanks: members.length,
      nNodes,
      nChannels,
      speedGBps: intraUsable / nChannels,
      intra: nvlink ? 'nvlink' : 'pcie',
      ampere: t.ampere,
      ll128: nvlink,
    };
  }
  const nicsUsed = Math.min(t.nics, ppn);
  const nChannels = 2 * nicsUsed;
  const total = Math.min(nicsUsed * t.nicGBps, ppn > 1 ? intraUsable : Infinity);
  return { nRanks: members.length, nNodes, nChannels, speedGBps: total / nChannels, intra: nvlink ? 'nvlink' : 'pcie', ampere: t.ampere, ll128: nvlink };
}

/** The link inside a host as NCCL counts it (nvlink 0.82 of the datasheet, PCIe 0.75: NCCL's own figures). */
export function usableIntra(t: Topology): number {
  return t.intra.GBps * (t.intra.kind === 'nvlink' ? 0.82 : t.intra.kind === 'pcie' ? 0.75 : 1);
}

/** Why a topology cannot hold a world, or null. */
export function topologyRefusal(t: Topology, world: number): string | null {
  if (!(t.hosts >= 1) || !Number.isInteger(t.hosts)) return `--hosts must be a whole number of hosts, got ${t.hosts}`;
  if (!(t.perHost >= 1) || !Number.isInteger(t.perHost)) return `ranks per host must be a whole number, got ${t.perHost}`;
  if (t.hosts * t.perHost !== world) return `${t.hosts} hosts × ${t.perHost} ranks hold ${t.hosts * t.perHost} ranks, not the world of ${world}`;
  if (t.hosts > 1 && !(t.nics >= 1)) return `--nics must be at least 1 between hosts, got ${t.nics}`;
  if (t.hosts > 1 && !(t.nicGBps > 0)) return `--nic-gbit must be above 0, got ${t.nicGBps * 8}`;
  if (t.perHost > 1 && !(t.intra.GBps > 0)) return `the link inside a host must be above 0 GB/s, got ${t.intra.GBps}`;
  return null;
}

/** Describes the network in a line, for the report. */
export function describeTopology(t: Topology): string {
  const hosts = `${t.hosts} host${t.hosts > 1 ? 's' : ''} × ${t.perHost} rank${t.perHost > 1 ? 's' : ''}`;
  const inside = t.perHost > 1 ? `, ${t.intra.kind} ${t.intra.GBps.toPrecision(3)} GB/s inside a host` : '';
  const between =
    t.hosts > 1
      ? `, ${t.nics} × ${(t.nicGBps * 8).toPrecision(3)} Gbit/s NIC${t.nics > 1 ? 's' : ''} per host${t.transport === 'ring' ? `, ${t.hopUs.toPrecision(3)} µs a hop` : ''}` // NCCL's hops are its own
      : '';
  const how =
    t.transport === 'nccl'
      ? "NCCL's algorithms and protocols (its tuning model)"
      : `zerowire's own ring over TCP${t.burstKiB ? `, each host's link a ${t.burstKiB} KiB token bucket` : ''}`;
  return `${hosts}${inside}${between}; ${how}; ${t.source}`;
}
