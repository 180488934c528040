// The pre-flight probe on loopback: a ring round and all-pairs rounds, every rank measuring what it receives.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PeerListener } from '../../../shared/transport/ring.js';
import { probeLinks, type ProbeRound } from '../../../shared/transport/link-probe.js';

async function run(world: number, rounds: (self: number) => ProbeRound[]) {
  const listeners = await Promise.all(Array.from({ length: world }, () => PeerListener.open(0, '127.0.0.1')));
  const peers = listeners.map((l) => ({ host: '127.0.0.1', port: l.port }));
  const auth = { runId: 'probe-test', ringKey: randomBytes(32) };
  try {
    const t0 = performance.now();
    const got = await Promise.all(listeners.map((listener, self) => probeLinks({ self, peers, listener, ...auth, timeoutMs: 5000 }, rounds(self))));
    return { got, ms: performance.now() - t0 };
  } finally {
    await Promise.all(listeners.map((l) => l.close()));
  }
}

describe('pre-flight link probe', () => {
  it('ring: every rank measures the link from its previous rank, one stream and several, and its round trip', async () => {
    const N = 3;
    const { got, ms } = await run(N, (r) => [{ sendTo: (r + 1) % N, recvFrom: (r - 1 + N) % N }]);
    console.log(
      `ring of ${N} on loopback in ${ms.toFixed(0)} ms: ${got
        .flat()
        .map((p) => `${p.from}->${p.to} ${p.mbit.toFixed(0)}/${p.mbitMulti.toFixed(0)} Mbit/s rtt ${p.rttMs.toFixed(2)} ms`)
        .join(', ')}`,
    );
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
