// One collective on the simulated network: its time from the topology and the transport. NCCL: the algorithm
// and protocol NCCL's tuning model picks for its size and group (nccl-tuning.ts), its latency, then its bytes
// as a flow on the NICs and host links it crosses, shared with whatever else is in flight (fluid.ts). zerowire's
// own ring (what a LAN run does): N−1 steps (2(N−1) for an all-reduce) of a hop's latency, and every ring edge's
// bytes on the NIC of the host it leaves (or the host's loopback).
import { sleep } from '../../shared/time/clock.js';
import { Fluid, type FlowSpec } from './fluid.js';
import { TokenBuckets } from './token-bucket.js';
import { ncclChoice, p2pLatencyUs, PROTOCOL_WIRE, type NcclColl } from './nccl-tuning.js';
import { commGraph, hostOf, spread, usableIntra, type Topology } from './topology.js';

export type SimKind = NcclColl | 'shift' | 'all-to-all';

/** A collective as its ranks entered it: what each sends per step, and how many steps. */
export interface SimCall {
  kind: SimKind;
  segmentBytes: number; // what one rank sends in one step (a shift: the most any rank sends)
  steps: number;
}

/** How often each algorithm was chosen, by collective, group and size. */
export interface ChoiceRow {
  kind: SimKind;
  ranks: number;
  hosts: number;
  bytes: number; // the whole buffer, as NCCL counts it (an all-gather's output)
  algorithm: string; // ring/Simple, tree/LL, ..., or zerowire's ring
  channels: number;
  latencyUs: number;
  count: number;
}

export class Network {
  readonly fluid: Fluid;
  private readonly choices = new Map<string, ChoiceRow>();

  constructor(readonly topology: Topology) {
    const t = topology;
    const nic = t.nics * t.nicGBps * 1e6;
    const intra = t.perHost * (t.transport === 'nccl' ? usableIntra(t) : t.intra.GBps) * 1e6;
    // a shaped LAN link: its burst leaves at the host's own pace (its loopback's), then at the shaped rate
    const burst = t.burstKiB ? t.burstKiB * 1024 : 0;
    const bucket = { rate: nic, burst, peak: Math.max(nic, t.intra.GBps * 1e6) };
    const buckets = burst ? new TokenBuckets((r) => (r.startsWith('nic:') ? bucket : null)) : null;
    this.fluid = new Fluid((r) => (r.startsWith('nic:') ? nic : intra), buckets);
  }

  /** Resolves when the collective over `members` (in ring order) is complete on every rank. */
  async run(members: readonly number[], call: SimCall): Promise<void> {
    const { latencyMs, flow, row } =
      call.kind === 'all-to-all'
        ? this.allToAll(members, call, spread(this.topology, members))
        : this.topology.transport === 'nccl'
          ? this.nccl(members, { ...call, kind: call.kind })
          : this.ring(members, call);
    const key = `${row.kind}|${row.ranks}|${row.hosts}|${row.bytes.toPrecision(3)}|${row.algorithm}`; // sizes a few bytes apart: one row
    const seen = this.choices.get(key);
    if (seen) seen.count++;
    else this.choices.set(key, { ...row, count: 1 });
    await sleep(latencyMs);
    await this.fluid.transfer(flow);
  }

  choiceRows(): ChoiceRow[] {
    return [...this.choices.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.ranks - b.ranks || a.bytes - b.bytes);
  }

  private nccl(members: readonly number[], call: SimCall & { kind: NcclColl | 'shift' }): { latencyMs: number; flow: FlowSpec; row: Omit<ChoiceRow, 'count'> } {
    const t = this.topology;
    const n = members.length;
    const g = commGraph(t, members);
    const on = spread(t, members);
    if (call.kind === 'shift') {
      // a send/receive pair: NCCL's p2p runs Simple over the one link between the two ranks
      const cross = members.some((r, i) => hostOf(t, r) !== hostOf(t, members[(i + 1) % n]));
      const latencyUs = p2pLatencyUs(cross ? 'net' : t.intra.kind === 'nvlink' ? 'nvlink' : 'pcie');
      const bw = cross ? t.nicGBps : usableIntra(t);
      const row = { kind: call.kind, ranks: n, hosts: on.size, bytes: call.segmentBytes, algorithm: 'p2p/Simple', channels: 1, latencyUs };
      return { latencyMs: latencyUs / 1000, flow: { bytes: call.segmentBytes, capBytesPerMs: bw * 1e6, demands: this.footprint(on, 1, cross) }, row };
    }
    const bytes = call.segmentBytes * n;
    const c = ncclChoice(call.kind, bytes, g);
    const busPerAlg = c.algorithm === 'ring' ? (call.kind === 'all-reduce' ? (2 * (n - 1)) / n : (n - 1) / n) : 2;
    const row = { kind: call.kind, ranks: n, hosts: g.nNodes, bytes, algorithm: `${c.algorithm}/${c.protocol}`, channels: g.nChannels, latencyUs: c.latencyUs };
    const flow = { bytes, capBytesPerMs: c.algBwGBps * 1e6, demands: this.footprint(on, busPerAlg * PROTOCOL_WIRE[c.protocol], g.nNodes > 1) };
    return { latencyMs: c.latencyUs / 1000, flow, row };
  }

  /** Every member sends a segment to each other member, all at once (NCCL's grouped sends and receives, Simple
   *  p2p; zerowire's K-1 stride rings): one latency; each host's NICs carry what its members send off the host,
   *  its link inside what stays. */
  private allToAll(members: readonly number[], call: SimCall, on: Map<number, number>): { latencyMs: number; flow: FlowSpec; row: Omit<ChoiceRow, 'count'> } {
    const t = this.topology;
    const K = members.length;
    const leaves = on.size > 1;
    const nccl = t.transport === 'nccl';
    const latencyUs = nccl ? p2pLatencyUs(leaves ? 'net' : t.intra.kind === 'nvlink' ? 'nvlink' : 'pcie') : leaves ? t.hopUs : t.intra.latencyUs;
    const demands = new Map<string, number>();
    for (const [h, k] of on) {
      if (leaves) demands.set(`nic:${h}`, (k * (K - k)) / (K - 1)); // per byte one member sends: its share that leaves
      if (k > 1) demands.set(`intra:${h}`, (k * (k - 1)) / (K - 1));
    }
    const cap = nccl ? (leaves ? t.nicGBps : usableIntra(t)) * 1e6 : Infinity; // NCCL: one rank's NIC, or its link inside the host
    const bytes = call.segmentBytes * call.steps;
    const row = {
      kind: call.kind,
      ranks: K,
      hosts: on.size,
      bytes: call.segmentBytes * K,
      algorithm: nccl ? 'p2p/Simple (grouped)' : "zerowire's stride rings",
      channels: 1,
      latencyUs,
    };
    return { latencyMs: latencyUs / 1000, flow: { bytes, capBytesPerMs: cap, demands }, row };
  }

  /** Bytes drawn per byte of the flow: on each host's NICs once (the rings and trees leave a host once per
   *  channel, and the channels share its NICs), and on each of its ranks' links inside it. */
  private footprint(on: Map<number, number>, perByte: number, leaves: boolean): Map<string, number> {
    const d = new Map<string, number>();
    for (const [h, k] of on) {
      if (leaves) d.set(`nic:${h}`, perByte);
      if (k > 1) d.set(`intra:${h}`, perByte * k);
    }
    return d;
  }

  private ring(members: readonly number[], call: SimCall): { latencyMs: number; flow: FlowSpec; row: Omit<ChoiceRow, 'count'> } {
    const t = this.topology;
    const n = members.length;
    const demands = new Map<string, number>();
    let cross = false;
    for (let i = 0; i < n; i++) {
      const [a, b] = [hostOf(t, members[i]), hostOf(t, members[(i + 1) % n])];
      const key = a === b ? `intra:${a}` : `nic:${a}`;
      cross ||= a !== b;
      demands.set(key, (demands.get(key) ?? 0) + 1);
    }
    const latencyUs = call.steps * (cross ? t.hopUs : t.intra.latencyUs);
    const bytes = call.steps * call.segmentBytes;
    const row = {
      kind: call.kind,
      ranks: n,
      hosts: spread(t, members).size,
      bytes: call.segmentBytes * n,
      algorithm: "zerowire's ring",
      channels: 1,
      latencyUs,
    };
    return { latencyMs: latencyUs / 1000, flow: { bytes, capBytesPerMs: Infinity, demands }, row };
  }
}
