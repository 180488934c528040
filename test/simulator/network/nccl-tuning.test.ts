// NCCL's choice, case by case, against its tuning model worked by hand from its source (src/graph/tuning.cc
// at NVIDIA/nccl commit 01afd20, the 2.9 era: baseLat, hwLat, ll128MaxBwPerCh, the tree's correction and the ring's plateau). Each case's
// arithmetic is written beside it: these figures come from the source's constants, not from our code.
import { describe, expect, it } from 'vitest';
import { algoModel, ncclChoice, type CommGraph } from '../../../simulator/network/nccl-tuning.js';
import { commGraph } from '../../../simulator/network/topology.js';
import { topology } from '../../helpers/topology.js';

// 2 nodes × 8 A100 (compute capability 8.0), 8 channels of 12.5 GB/s (4 × 200 Gbit NICs): busBw 100
const A: CommGraph = { nRanks: 16, nNodes: 2, nChannels: 8, speedGBps: 12.5, intra: 'nvlink', ampere: true, ll128: true };
// one node of 8 H100s on NVLink: 16 channels, 369 GB/s together
const B: CommGraph = { nRanks: 8, nNodes: 1, nChannels: 16, speedGBps: (450 * 0.82) / 16, intra: 'nvlink', ampere: false, ll128: true };
// 128 nodes × 8 H100s, 8 channels of 12.5 GB/s
const C: CommGraph = { nRanks: 1024, nNodes: 128, nChannels: 8, speedGBps: 12.5, intra: 'nvlink', ampere: false, ll128: true };

describe("NCCL's tuning model", () => {
  it('gives each algorithm and protocol the latency and bandwidth the source does (2 × 8, all-reduce)', () => {
    // ring, nsteps 30, nInterSteps 2; LL's intra hop ×1.8 off the node
    //   LL:     3.6 + 28·(0.47·1.8) + 2·2.7 = 32.688 µs; busBw 100/4 = 25, ·16/30 = 13.333 GB/s
    //   LL128: 10.0 + 28·1.9 + 2·4.0 = 71.2; min(100·0.92, 16.7·8) = 92, ·16/30 = 49.067
    //   Simple: 8.4 + 28·3.4 + 2·9.6 = 122.8; 100·16/30 = 53.333
    // tree: 2·((16/2 − 1)·intra + log2(2)·inter); busBw min(100·0.9, 110 or 130) = 90, ·0.5
    //   LL:     4.4 + 2·(7·0.936 + 5.0) = 27.504; 90/3.8·0.5 = 11.842
    //   LL128:  4.4 + 2·(7·1.2 + 8.5) = 38.2; min(90·0.915, 16.7·8·7/9)·0.5 = 41.175
    //   Simple: 0 + 2·(7·28 + 50) = 492; 45
    const want = {
      ring: { LL: [32.688, 13.333], LL128: [71.2, 49.067], Simple: [122.8, 53.333] },
      tree: { LL: [27.504, 11.842], LL128: [38.2, 41.175], Simple: [492, 45] },
    } as const;
    for (const a of ['ring', 'tree'] as const)
      for (const p of ['LL', 'LL128', 'Simple'] as const) {
        const m = algoModel('all-reduce', A, a, p)!;
        expect(m.latencyUs, `${a}/${p} latency`).toBeCloseTo(want[a][p][0], 3);
        expect(m.algBwGBps, `${a}/${p} bandwidth`).toBeCloseTo(want[a][p][1], 3);
      }
  });

  // time = latency + bytes / (1000 · algBw · the tree's correction at log2(bytes/64)); the fastest wins
  const cases: { graph: CommGraph; name: string; coll: 'all-reduce' | 'all-gather'; bytes: number; want: string; why: string }[] = [
    { graph: A, name: '2 × 8', coll: 'all-reduce', bytes: 1024, want: 'tree/LL', why: 'tree LL 27.50 + 1024/(11842·0.9) = 27.60 µs; ring LL 32.76' },
    { graph: A, name: '2 × 8', coll: 'all-reduce', bytes: 256 << 10, want: 'tree/LL128', why: 'tree LL128 38.2 + 262144/(41175·0.6) = 48.8; ring LL 52.4' },
    {
      graph: A,
      name: '2 × 8',
      coll: 'all-reduce',
      bytes: 64 << 20,
      want: 'ring/LL128',
      why: 'ring LL128 71.2 + 1367.7 = 1438.9; ring Simple 122.8·1.9 + 1258.3 = 1491.6',
    },
    { graph: A, name: '2 × 8', coll: 'all-reduce', bytes: 1 << 30, want: 'ring/Simple', why: 'ring Simple 233.3 + 20132.7 = 20366; ring LL128 21954' },
    { graph: B, name: '1 × 8', coll: 'all-gather', bytes: 1 << 20, want: 'ring/LL', why: 'LL 6.89 + 1048576/(123·8/7 GB/s) = 14.3; LL128 26.4; Simple 34.7' },
    { graph: B, name: '1 × 8', coll: 'all-gather', bytes: 8 << 20, want: 'ring/LL128', why: 'LL128 23.3 + 25.1 = 48.4; Simple 32.2 + 19.9 = 52.1' },
    { graph: B, name: '1 × 8', coll: 'all-gather', bytes: 64 << 20, want: 'ring/Simple', why: 'Simple 32.2 + 159.1 = 191.3; LL128 223.8' },
    { graph: C, name: '128 × 8', coll: 'all-reduce', bytes: 4096, want: 'tree/LL', why: 'tree LL 4.4 + 2·(7·0.936 + 7·5.0) = 87.5, + 0.56' },
    {
      graph: C,
      name: '128 × 8',
      coll: 'all-reduce',
      bytes: 256 << 20,
      want: 'tree/LL128',
      why: 'tree LL128 140.2 + 7334 = 7474.5; tree Simple 7803; ring LL128 10260',
    },
  ];
  for (const c of cases)
    it(`${c.name} ${c.coll} of ${c.bytes} B: ${c.want} (${c.why})`, () => {
      const got = ncclChoice(c.coll, c.bytes, c.graph);
      expect(`${got.algorithm}/${got.protocol}`).toBe(c.want);
    });

  it('uses no tree for an all-gather, and no LL128 where NCCL leaves it off (PCIe)', () => {
    expect(algoModel('all-gather', A, 'tree', 'Simple')).toBeNull();
    expect(algoModel('all-reduce', { ...A, ll128: false }, 'ring', 'LL128')).toBeNull();
  });

  it("finds two channels per NIC a group's ranks can use, at the NICs' rate", () => {
    const t = topology({ hosts: 128, perHost: 8, nics: 4 });
    const all = Array.from({ length: 1024 }, (_, r) => r);
    expect(commGraph(t, all)).toMatchObject({ nRanks: 1024, nNodes: 128, nChannels: 8, speedGBps: 12.5 });
    const cross = all.filter((r) => r % 8 === 3); // one rank a host: one NIC
    expect(commGraph(t, cross)).toMatchObject({ nNodes: 128, nChannels: 2, speedGBps: 12.5 });
    expect(commGraph(t, all.slice(0, 8))).toMatchObject({ nNodes: 1, nChannels: 16 });
  });
});
