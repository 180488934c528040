import { describe, expect, it } from 'vitest';
import { union, wireUse, WireLog } from '../../../shared/transport/wire-log.js';
import { closeAll, localRings } from '../../helpers/rings.js';

describe('wire use: bytes that arrived while compute ran', () => {
  it('merges intervals and splits a frame that straddles the end of compute pro rata', () => {
    expect(
      union([
        [5, 7],
        [0, 2],
        [1, 3],
      ]),
    ).toEqual([
      [0, 3],
      [5, 7],
    ]);
    const u = wireUse(
      [
        { start: 0, end: 10, bytes: 1000 },
        { start: 20, end: 20, bytes: 50 },
      ],
      [[5, 25]],
    );
    expect(u).toEqual({ wireMs: 10, bytes: 1050, hiddenMs: 5, hiddenBytes: 550 });
  });

  it('a frame that straddles a unit counts as hidden pro rata: an estimate, which the report calls one', () => {
    // Header read before the unit began (t = 0), last byte after it ended (t = 10); the unit ran 2..8. Where the
    // bytes really waited (the kernel's buffer, or the wire) is not known: 60% of them count as hidden.
    const u = wireUse([{ start: 0, end: 10, bytes: 1000 }], [[2, 8]]);
    expect(u).toEqual({ wireMs: 10, bytes: 1000, hiddenMs: 6, hiddenBytes: 600 });
  });

  it('holds a step of 300,000 frames whole, and lets go of the steps before it', () => {
    const log = new WireLog();
    for (let i = 0; i < 1000; i++) log.add(i * 1e-3, i * 1e-3 + 5e-4, 7); // an earlier step
    const t0 = 10;
    const frames = 300_000;
    for (let i = 0; i < frames; i++) log.add(t0 + i * 1e-3, t0 + i * 1e-3 + 5e-4, 1024);
    const step = log.since(t0);
    expect(step).toHaveLength(frames);
    expect(log.size).toBe(frames); // the earlier step's frames are gone
    const u = wireUse(step, [[t0, t0 + frames * 1e-3]]);
    expect(u.bytes).toBe(frames * 1024);
    expect(u.hiddenBytes).toBeCloseTo(frames * 1024, 0);
    expect(u.wireMs).toBeCloseTo(frames * 5e-4, 3);
  });

  it('keeps only the spans a step asks for', () => {
    const log = new WireLog();
    log.add(0, 1, 10);
    log.add(2, 3, 20);
    log.add(4, 6, 30);
    expect(log.since(2.5).map((s) => s.bytes)).toEqual([20, 30]);
  });

  it('real sockets: a collective stalled behind a slow peer is not hidden, however long it is pending', async () => {
    const [a, b] = await localRings(2, { chunkBytes: 64 << 10 });
    try {
      const x = new Float32Array(1 << 18).fill(1); // 1 MiB
      const y = new Float32Array(1 << 18).fill(2);
      const t0 = performance.now();
      const computing: [number, number] = [t0, t0 + 400]; // rank 0 computes meanwhile (its event loop stays free)
      const pendingA = a.coll.allReduce(x, 'stalled');
      await new Promise((r) => setTimeout(r, 250)); // rank 1 enters 250 ms late
      const [rec] = await Promise.all([pendingA, b.coll.allReduce(y, 'late')]);
      const use = wireUse(a.coll.ring.prev!.wire.since(t0), [computing]);
      // Pending for 250 ms while compute ran: the collective's span covers it, the wire does not.
      expect(rec.ms).toBeGreaterThan(200);
      expect(use.bytes).toBe(rec.recv.payload);
      expect(use.hiddenMs).toBeLessThan(rec.ms - 200);
      expect(use.hiddenMs).toBeCloseTo(use.wireMs, 6); // what did move, moved while rank 0 computed
      // The same bytes against compute that ended before the peer arrived: nothing hidden.
      expect(wireUse(a.coll.ring.prev!.wire.since(t0), [[t0, t0 + 200]]).hiddenBytes).toBe(0);
    } finally {
      await closeAll([a, b]);
    }
  });
});
