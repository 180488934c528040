// N rings wired together over real loopback WebSockets, inside this process.
import { randomBytes } from 'node:crypto';
import { Collectives, type CollectiveOptions } from '../../shared/collectives/collectives.js';
import { SyntheticCollectives } from '../../shared/whatif/synthetic-collectives.js';
import { MemoryLedger } from '../../shared/tensor/memory-ledger.js';
import { PeerListener, wireRing } from '../../shared/transport/ring.js';
import type { LinkTls } from '../../shared/transport/link-tls.js';

export interface LocalRank {
  coll: Collectives;
  ledger: MemoryLedger; // replaced by a scheme's own (trainDistributed), as a rank does per scheme
  close(): Promise<void>;
}

/** `tls`: every link over TLS with this certificate, key and CA. */
/** `world` ranks wired into a ring on loopback; `synthetic`: a what-if rank's collectives (no values). */
export async function localRings(world: number, opts: Partial<CollectiveOptions> & { tls?: LinkTls; synthetic?: boolean } = {}): Promise<LocalRank[]> {
  const listeners = await Promise.all(Array.from({ length: world }, () => PeerListener.open(0, '127.0.0.1', opts.tls)));
  const runId = `test-${process.pid}-${Date.now()}`;
  const ringKey = randomBytes(32);
  const chunkBytes = opts.chunkBytes ?? 1 << 20;
  const rings = await Promise.all(
    listeners.map((listener, rank) =>
      wireRing({
        rank,
        world,
        runId,
        ringKey,
        listener,
        prev: { host: '127.0.0.1', port: listeners[(rank - 1 + world) % world].port },
        timeoutMs: 5000,
        chunkBytes,
      }),
    ),
  );
  return rings.map((ring, rank) => {
    const ledger = new MemoryLedger();
    return {
      ledger,
      coll: new (opts.synthetic ? SyntheticCollectives : Collectives)(ring, {
        chunkBytes,
        timeoutMs: opts.timeoutMs ?? 10_000,
        ledger,
        linkScale: opts.linkScale,
      }),
      close: async () => {
        ring.close();
        await listeners[rank].close();
      },
    };
  });
}

export async function closeAll(ranks: LocalRank[]): Promise<void> {
  await Promise.all(ranks.map((r) => r.close()));
}
