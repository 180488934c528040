// The pre-flight probe on loopback: a ring round and all-pairs rounds, every rank measuring what it receives.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PeerListener } from '../../../shared/transport/ring.js';
import { probeLinks, type ProbeRound } from '../../../shared/transport/link-probe.js';

/** What the coordinator's 'pinged'/'quiet' does: every prober waits until all have timed their round trips. */
function meeting(world: number) {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((r) => (open = r));
  return {
    arrived: () => arrived,
    quiet: () => (++arrived === world && open(), all),
  };
}

async function run(world: number, rounds: (self: number) => ProbeRound[]) {
  const listeners = await Promise.all(Array.from({ length: world }, () => PeerListener.open(0, '127.0.0.1')));
  const peers = listeners.map((l) => ({ host: '127.0.0.1', port: l.port }));
  const auth = { runId: 'probe-test', ringKey: randomBytes(32) };
  const meet = meeting(world);
  // a sender takes its first data connection (probe:1) only once it is about to send: how many ranks had met then
  const metWhenSending: number[] = [];
  for (const l of listeners) {
    const expect = l.expect.bind(l);
    l.expect = (rank, runId, key, timeoutMs, ring) => (ring === 'probe:1' && metWhenSending.push(meet.arrived()), expect(rank, runId, key, timeoutMs, ring));
  }
  try {
    const t0 = performance.now();
    const probe = (listener: PeerListener, self: number) => probeLinks({ self, peers, listener, ...auth, timeoutMs: 5000, quiet: meet.quiet }, rounds(self));
    const got = await Promise.all(listeners.map(probe));
    return { got, ms: performance.now() - t0, metWhenSending };
  } finally {
    await Promise.all(listeners.map((l) => l.close()));
  }
}

describe('pre-flight link probe', () => {
  it('ring: every rank measures the link from its previous rank, one stream and several, and its round trip', async () => {
    const N = 3;
    const { got, ms, metWhenSending } = await run(N, (r) => [{ sendTo: (r + 1) % N, recvFrom: (r - 1 + N) % N }]);
    console.log(
      `ring of ${N} on loopback in ${ms.toFixed(0)} ms: ${got
        .flat()
        .map((p) => `${p.from}->${p.to} ${p.mbit.toFixed(0)}/${p.mbitMulti.toFixed(0)} Mbit/s rtt ${p.rttMs.toFixed(2)} ms`)
        .join(', ')}`,
    );
    expect(metWhenSending).toEqual([N, N, N]); // no probe sent before every round trip was timed
    for (const [r, probes] of got.entries()) {
      expect(probes).toHaveLength(1);
      expect(probes[0]).toMatchObject({ from: (r - 1 + N) % N, to: r, streams: 4 });
      expect(probes[0].mbit).toBeGreaterThan(100);
      expect(probes[0].mbitMulti).toBeGreaterThan(100);
      expect(probes[0].rttMs).toBeGreaterThan(0);
    }
  });

  it('all pairs: H-1 rounds, each rank receiving from every other once', async () => {
    const H = 3;
    const { got } = await run(H, (i) => [1, 2].map((k) => ({ sendTo: (i + k) % H, recvFrom: (i - k + H) % H })));
    for (const [r, probes] of got.entries()) expect(probes.map((p) => p.from).sort()).toEqual([0, 1, 2].filter((x) => x !== r));
  });
});
