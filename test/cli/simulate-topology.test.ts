// The network `simulate --run` builds from a LAN run's pre-flight: each link read as the best of its probes
// between hosts, the slowest such link as the NIC, the loopback's typical rate inside a host.
import { describe, expect, it } from 'vitest';
import { topologyFromRun } from '../../cli/simulate-topology.js';
import type { Report } from '../../shared/accounting/report.js';

type Run = Parameters<typeof topologyFromRun>[0];
const HOSTS = ['a', 'a', 'b', 'b'];

/** A 2 x 2 run's pre-flight: [from, to, one stream, several, plain one, plain several] in Mbit/s, 0.2 ms round trips. */
function run(links: [number, number, number, number, number, number][]): Run {
  const ranks = HOSTS.map((host, rank) => ({ rank, host })) as unknown as Report['ranks'];
  const probes = links.map(([from, to, mbit, mbitMulti, plainMbit, plainMbitMulti]) => ({
    from,
    to,
    fromHost: HOSTS[from],
    toHost: HOSTS[to],
    mbit,
    mbitMulti,
    plainMbit,
    plainMbitMulti,
    streams: 4,
    rttMs: 0.2,
  }));
  return { world: 4, ranks, network: { preflight: { mode: 'ring', ms: 1, links: probes } } as Report['network'] };
}

/** The network `simulate --run` makes of that pre-flight (`nicGbit`: the rate between hosts given instead). */
const topology = (links: Parameters<typeof run>[0], nicGbit?: number) => topologyFromRun(run(links), 'x.json', nicGbit);

describe('simulate --run: the network from the pre-flight', () => {
  it("reads a link between hosts at the best of its four probes, and the slowest such link as the hosts' NIC", () => {
    // 1 -> 2 read low on zerowire's transport (busy cores) but 948 on plain TCP; 3 -> 0 is the slowest link
    const t = topology([
      [0, 1, 3000, 4000, 9000, 9000],
      [1, 2, 708, 491, 863, 948],
      [2, 3, 2000, 5000, 9000, 9000],
      [3, 0, 900, 930, 910, 920],
    ]);
    expect(t.nicGBps * 8000).toBeCloseTo(930, 6);
    expect(t.hosts).toBe(2);
    expect(t.transport).toBe('ring');
  });

  it("takes the loopback's median inside a host, from zerowire's own readings (plain TCP is not its pace there)", () => {
    const t = topology([
      [0, 1, 2226, 2111, 6757, 16688],
      [1, 2, 950, 950, 950, 950],
      [2, 3, 3000, 5794, 9000, 9000],
      [3, 0, 950, 950, 950, 950],
    ]);
    // inside: 2226 and 5794 (the better of one stream and several); their median
    expect(t.intra.GBps * 8000).toBeCloseTo((2226 + 5794) / 2, 6);
    expect(t.nicGBps * 8000).toBeCloseTo(950, 6);
  });

  it('takes --nic-gbit over the measured rate between hosts', () => {
    const t = topology(
      [
        [0, 1, 3000, 3000, 3000, 3000],
        [1, 2, 500, 500, 500, 500],
        [2, 3, 3000, 3000, 3000, 3000],
        [3, 0, 950, 950, 950, 950],
      ],
      0.955,
    );
    expect(t.nicGBps * 8).toBeCloseTo(0.955, 9);
  });
});
