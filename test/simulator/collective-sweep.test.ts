// The nccl-tests-style sweep: each size alone on the network model, its time NCCL's tuning model's where no link
// binds harder, busbw by nccl-tests' factors, and a host of H100s at the bus bandwidth NCCL's own figures give.
import { describe, expect, it } from 'vitest';
import { busFactor, doublingSizes, sweepCollective } from '../../simulator/collective-sweep.js';
import { ncclChoice } from '../../simulator/network/nccl-tuning.js';
import { commGraph } from '../../simulator/network/topology.js';
import { topology } from '../helpers/topology.js';

describe('sweepCollective', () => {
  it("gives a host of 8 H100s NCCL's ring bus bandwidth over NVLink: 0.82 of the 450 GB/s line rate", async () => {
    // NCCL's maintainers put the effective NVLink bandwidth of an H100 at about 370 GB/s (busbw of a ring, or of
    // any collective but all-reduce): 20.6 GB/s on each of 18 links
    const host = topology({ hosts: 1, perHost: 8, intra: { kind: 'nvlink', GBps: 450, latencyUs: 0.5 } });
    const [row] = await sweepCollective(host, 'all-gather', [8 * 2 ** 30]);
    expect(row.algorithm).toBe('ring/Simple');
    expect(row.busBwGBps).toBeGreaterThan(0.99 * 369);
    expect(row.busBwGBps).toBeLessThanOrEqual(369.01);
  });

  it("takes NCCL's chosen time on an idle network, and reports algbw and busbw as nccl-tests does", async () => {
    const t = topology({ hosts: 4, perHost: 8, nics: 4, nicGBps: 25 });
    const sizes = doublingSizes(64, 2 ** 30);
    expect(sizes[1]).toBe(128);
    expect(sizes[sizes.length - 1]).toBe(2 ** 30);
    const members = Array.from({ length: 32 }, (_, r) => r);
    for (const kind of ['all-reduce', 'all-gather', 'reduce-scatter'] as const) {
      const rows = await sweepCollective(t, kind, sizes);
      for (const r of rows) {
        const c = ncclChoice(kind, r.bytes, commGraph(t, members));
        expect(`${c.algorithm}/${c.protocol}`).toBe(r.algorithm);
        // the flow can be held below the algorithm's bandwidth by the NICs it draws on, never above it
        expect(r.timeUs).toBeGreaterThanOrEqual(c.timeUs * (1 - 1e-9));
        expect(r.algBwGBps).toBeCloseTo(r.bytes / r.timeUs / 1000, 9);
        expect(r.busBwGBps).toBeCloseTo(r.algBwGBps * busFactor(kind, 32), 9);
      }
      // large buffers: the bandwidth term; small ones: the latency
      expect(rows[rows.length - 1].busBwGBps).toBeGreaterThan(50 * rows[0].busBwGBps);
    }
  });
});
