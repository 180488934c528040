// Ring links over TLS: collectives are exact and every link says what it encrypts with; a peer whose
// certificate the CA did not sign, or that speaks plain WebSocket, is refused with a reason that names it.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { closeAll, localRings } from '../../helpers/rings.js';
import { makeCerts } from '../../helpers/certs.js';
import { dialPeer, PeerListener } from '../../../shared/transport/ring.js';

const certs = makeCerts();
afterAll(() => certs.remove());
const cluster = { cert: certs.pem(certs.cert), key: certs.pem(certs.key), ca: certs.pem(certs.ca) };
const auth = { runId: 'tls-test', ringKey: randomBytes(32) };
const limits = { chunkBytes: 1 << 16, timeoutMs: 3000 };

describe('TLS ring links', () => {
  it('3 ranks: all-reduce sums exactly over TLS 1.3 links', async () => {
    const ranks = await localRings(3, { tls: cluster, chunkBytes: 4096 });
    try {
      const L = 10_001;
      const bufs = ranks.map((_, r) => Float32Array.from({ length: L }, (_, i) => (i % 97) + r));
      await Promise.all(ranks.map((rk, r) => rk.coll.allReduce(bufs[r])));
      for (const b of bufs) for (const i of [0, 1, 5000, L - 1]) expect(b[i]).toBe(3 * (i % 97) + 3);
      for (const rk of ranks) {
        const { next, prev } = rk.coll.ring;
        for (const link of [next!, prev!]) expect(link.cipher).toMatchObject({ protocol: 'TLSv1.3', cipher: expect.stringMatching(/^TLS_/) });
      }
    } finally {
      await closeAll(ranks);
    }
  });

  it('a listener with a certificate the CA did not sign is refused by the dialler, with the reason', async () => {
    const stranger = await PeerListener.open(0, '127.0.0.1', { cert: certs.pem(certs.strangerCert), key: certs.pem(certs.strangerKey), ca: cluster.ca });
    try {
      const err = await dialPeer({ host: '127.0.0.1', port: stranger.port }, 1, 0, auth, limits, 'main', cluster).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(
        /cannot reach rank 0 at wss:\/\/127\.0\.0\.1:\d+\/: its TLS certificate is not signed by the CA this rank trusts \(DEPTH_ZERO_SELF_SIGNED_CERT\)/,
      );
    } finally {
      await stranger.close();
    }
  });

  it('a plain listener dialled over TLS, and a TLS listener dialled plain, fail with a reason', async () => {
    const plain = await PeerListener.open(0, '127.0.0.1');
    const secure = await PeerListener.open(0, '127.0.0.1', cluster);
    try {
      const a = await dialPeer({ host: '127.0.0.1', port: plain.port }, 1, 0, auth, limits, 'main', cluster).catch((e: Error) => e);
      expect((a as Error).message).toMatch(/does not speak TLS/);
      const b = await dialPeer({ host: '127.0.0.1', port: secure.port }, 1, 0, auth, limits).catch((e: Error) => e);
      expect(b).toBeInstanceOf(Error);
      expect((b as Error).message).toMatch(/cannot reach rank 0 at ws:\/\//);
    } finally {
      await Promise.all([plain.close(), secure.close()]);
    }
  });
});
