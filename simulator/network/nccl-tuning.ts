// NCCL's choice of algorithm and protocol for one collective, from its published tuning model (src/graph/
// tuning.cc at NVIDIA/nccl commit 01afd20, the 2.9 era: ncclTopoTuneModel and ncclTopoGetAlgoTime): for every algorithm (ring, tree) and
// protocol (LL, LL128, Simple) a latency (a base, plus a per-hop figure for NVLink, PCIe or the network) and an
// algorithm bandwidth (channels × per-channel speed, with each protocol's efficiency), time = latency + bytes /
// bandwidth, and the fastest wins. The constants are NCCL's; the code is ours. The channels and their speed
// come from the topology (topology.ts), as NCCL's graph search would find them.

type Algorithm = 'ring' | 'tree';
export type Protocol = 'LL' | 'LL128' | 'Simple';
export type NcclColl = 'all-reduce' | 'all-gather' | 'reduce-scatter';
type HopKind = 'nvlink' | 'pcie' | 'net';

const ALGORITHMS: readonly Algorithm[] = ['tree', 'ring'];
const PROTOCOLS: readonly Protocol[] = ['LL', 'LL128', 'Simple'];

// microseconds: [tree, ring][LL, LL128, Simple]
const BASE_LAT: Record<Algorithm, Record<Protocol, number>> = {
  tree: { LL: 4.4, LL128: 4.4, Simple: 0 },
  ring: { LL: 3.6, LL128: 10.0, Simple: 8.4 },
};
const HW_LAT: Record<HopKind, Record<Algorithm, Record<Protocol, number>>> = {
  nvlink: { tree: { LL: 0.52, LL128: 1.2, Simple: 28 }, ring: { LL: 0.47, LL128: 1.9, Simple: 3.4 } },
  pcie: { tree: { LL: 1.0, LL128: 1.9, Simple: 28 }, ring: { LL: 1.0, LL128: 2.5, Simple: 5.7 } },
  net: { tree: { LL: 5.0, LL128: 8.5, Simple: 50 }, ring: { LL: 2.7, LL128: 4.0, Simple: 9.6 } },
};
/** One send/receive over one hop (NCCL's p2p runs the Simple protocol): the ring's Simple base latency and that
 *  hop's Simple figure, microseconds. The one place these constants are read for p2p. */
export function p2pLatencyUs(hop: HopKind): number {
  return BASE_LAT.ring.Simple + HW_LAT[hop].ring.Simple;
}

// LL128's most per channel, GB/s, by collective
const LL128_MAX_BW_PER_CH: Record<NcclColl, number> = { 'all-gather': 18.3, 'reduce-scatter': 15.2, 'all-reduce': 16.7 };
// Trees stray from the model at medium sizes: NCCL's correction, powers of two from 64 B
const TREE_CORRECTION: Record<Protocol, number[]> = {
  LL: [1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0],
  LL128: [1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.5, 0.6, 0.6, 0.7, 0.7, 0.8, 0.9, 0.9, 1.0],
  Simple: [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.6, 0.6, 0.7, 0.8, 0.9],
};

/** What NCCL's graph search found for a communicator: its ranks and nodes, its channels and their speed. */
export interface CommGraph {
  nRanks: number;
  nNodes: number;
  nChannels: number;
  speedGBps: number; // per channel (NCCL's speedIntra, equal to speedInter on a graph that leaves the node)
  intra: 'nvlink' | 'pcie'; // how the ranks of one node reach each other
  ampere: boolean; // compute capability 8.0 on every rank: NCCL caps the bus bandwidth at 235 GB/s
  ll128: boolean; // LL128 enabled (NCCL: NVLink between the GPUs of a node, on the GPUs it was validated on)
}

export interface Choice {
  algorithm: Algorithm;
  protocol: Protocol;
  latencyUs: number;
  algBwGBps: number; // bytes / (time - latency)
  busBwGBps: number; // what the links carry per rank, per second (the bus bandwidth)
  timeUs: number;
}

const log2i = (n: number) => (n < 1 ? -1 : Math.floor(Math.log2(n)));

/** Latency (µs) and algorithm bandwidth (GB/s) of one algorithm and protocol, or null where NCCL has none. */
export function algoModel(coll: NcclColl, g: CommGraph, a: Algorithm, p: Protocol): { latencyUs: number; algBwGBps: number; busBwGBps: number } | null {
  if (a === 'tree' && coll !== 'all-reduce') return null; // trees are NCCL's for all-reduce only
  if (p === 'LL128' && !g.ll128) return null;
  const { nRanks, nNodes } = g;
  const nsteps = coll === 'all-reduce' ? 2 * (nRanks - 1) : nRanks - 1;
  const nInterSteps = coll === 'all-reduce' ? 2 * (nNodes - 1) : nNodes - 1;
  const ppn = nRanks / nNodes;
  let busBw = g.nChannels * g.speedGBps;
  if (g.ampere) busBw = Math.min(busBw, 235);
  if (a === 'ring' && p === 'LL') busBw *= nNodes > 1 || coll === 'all-reduce' ? 1 / 4 : 1 / 3;
  if (a === 'ring' && p === 'LL128') busBw = Math.min(busBw * (ppn < 2 ? 0.7 : 0.92), LL128_MAX_BW_PER_CH[coll] * g.nChannels);
  const maxTreeBw = nNodes > 2 ? (g.ampere && p === 'LL128' ? 105 : 80) : g.ampere && p === 'LL128' ? 130 : 110;
  if (a === 'tree') busBw = Math.min(busBw * 0.9, maxTreeBw);
  if (a === 'tree' && p === 'LL') busBw *= 1 / 3.8;
  if (a === 'tree' && p === 'LL128') busBw = Math.min(busBw * (nNodes === 1 ? 7 / 9 : 0.915), (LL128_MAX_BW_PER_CH[coll] * g.nChannels * 7) / 9);
  const ratio = a === 'ring' ? nRanks / nsteps : 0.5; // bus bandwidth to algorithm bandwidth
  let intraLat = HW_LAT[g.intra][a][p];
  const interLat = HW_LAT.net[a][p];
  if (nNodes > 1 && p === 'LL') intraLat *= 1.8;
  const hop = nNodes === 1 ? intraLat : interLat;
  const latencyUs =
    BASE_LAT[a][p] +
    (a === 'ring'
      ? nNodes === 1
        ? nsteps * hop
        : (nsteps - nInterSteps) * intraLat + nInterSteps * interLat
      : 2 * ((nRanks / nNodes - 1) * intraLat + log2i(nNodes) * interLat));
  return { latencyUs, algBwGBps: busBw * ratio, busBwGBps: busBw };
}

/** NCCL's pick for `bytes` (the whole buffer: an all-gather's output, a reduce-scatter's input). */
export function ncclChoice(coll: NcclColl, bytes: number, g: CommGraph): Choice {
  let best: Choice | null = null;
  for (const a of ALGORITHMS)
    for (const p of PROTOCOLS) {
      const m = algoModel(coll, g, a, p);
      if (!m || m.algBwGBps <= 0) continue;
      let bw = m.algBwGBps;
      let lat = m.latencyUs;
      const logSize = log2i(Math.floor(bytes / 64));
      if (a === 'tree' && logSize >= 0 && logSize < 22) bw *= TREE_CORRECTION[p][logSize];
      if (a === 'ring' && p === 'Simple' && g.nNodes > 1 && coll === 'all-reduce' && bytes >= (g.nRanks / 16) * 65536) lat *= 1.9; // the ring's plateau
      const timeUs = lat + bytes / (1000 * bw);
      if (!best || timeUs < best.timeUs) best = { algorithm: a, protocol: p, latencyUs: lat, algBwGBps: bw, busBwGBps: m.busBwGBps, timeUs };
    }
  if (!best) throw new Error(`no NCCL algorithm for ${coll} on ${g.nRanks} ranks`);
  return best;
}

/** Bytes on the wire per payload byte: LL sends a 4-byte flag with every 4 bytes, LL128 8 bytes in every 128. */
export const PROTOCOL_WIRE: Record<Protocol, number> = { LL: 2, LL128: 128 / 120, Simple: 1 };
