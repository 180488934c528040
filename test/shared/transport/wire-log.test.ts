import { describe, expect, it } from 'vitest';
import { arrivalMs, union, wireUse, WireLog } from '../../../shared/transport/wire-log.js';
import { StepProbe } from '../../../shared/training/schemes/step-probe.js';
import { MemoryLedger } from '../../../shared/tensor/memory-ledger.js';
import { closeAll, localRings } from '../../helpers/rings.js';

/** Hold this thread, as inline compute does: no event loop turn, so nothing is read from any socket. */
function spin(ms: number): void {
  for (const t = performance.now(); performance.now() - t < ms;);
}

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

  it("a span for which the kernel's queue was read counts what arrived at the link's pace, and not its frames again", () => {
    // Unit A (0..10) was read from the kernel: 1 MB arrived meanwhile at 1000 Mbit/s, 8 ms of it. Unit B
    // (20..30) was not (a compute thread): the frame read across it counts pro rata as before.
    const frames = [
      { start: 5, end: 12, bytes: 700 }, // read after unit A: not counted against it again
      { start: 25, end: 35, bytes: 1000 },
    ];
    const compute = [[0, 10] as const, [20, 30] as const];
    const u = wireUse(frames, compute, [{ start: 0, end: 10, bytes: 1e6, ms: arrivalMs(1e6, 1000, 10) }]);
    expect(u.hiddenBytes).toBeCloseTo(1e6 + 500, 6);
    expect(u.hiddenMs).toBeCloseTo(8 + 5, 6);
    // No longer than the span allows, and with no measured pace, the span itself; nothing arrived, nothing hidden.
    expect(arrivalMs(1e9, 1000, 10)).toBe(10);
    expect(arrivalMs(10, null, 10)).toBe(10);
    expect(arrivalMs(0, null, 10)).toBe(0);
    expect(wireUse([{ start: 0, end: 10, bytes: 9 }], [[0, 10]], [{ start: 0, end: 10, bytes: 0, ms: 0 }])).toEqual({
      wireMs: 10,
      bytes: 9,
      hiddenMs: 0,
      hiddenBytes: 0,
    });
  });

  it('real sockets: bytes that reach the kernel while this thread computes are counted from its queue', async () => {
    const [a, b] = await localRings(2, { chunkBytes: 64 << 10 });
    try {
      const link = a.coll.ring.prev!;
      if (process.platform === 'linux') expect(link.receiveQueue, 'FIONREAD through koffi on Linux').not.toBeNull();
      if (!link.receiveQueue) return;
      const probe = new StepProbe([a.coll], new MemoryLedger(), () => 0);
      const x = new Float32Array(1 << 16).fill(1); // 256 KiB
      const y = new Float32Array(1 << 16).fill(2);
      let late: Promise<unknown> = Promise.resolve();
      const read0 = link.socketReceived();
      await probe.unit(0, 'backward', async () => {
        late = b.coll.allReduce(y, 'sent while rank 0 computes'); // rank 1's first chunks leave now
        spin(60);
      });
      expect(link.socketReceived()).toBe(read0); // nothing was read during the unit
      await Promise.all([a.coll.allReduce(x, 'after'), late]);
      const st = probe.finish(0);
      // Rank 1's first step: its half of its segment, 64 KiB in one chunk, plus whatever else it could send.
      expect(st.wire.hiddenBytes).toBeGreaterThanOrEqual(64 << 10);
      expect(st.wire.hiddenMs).toBeGreaterThan(0);
      expect(st.wire.hiddenMs).toBeLessThanOrEqual(st.units[0].end - st.units[0].start); // no longer than the unit
    } finally {
      await closeAll([a, b]);
    }
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
