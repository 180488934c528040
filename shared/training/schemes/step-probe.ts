// What a step measures about itself, kept out of the step's algorithm: wall time, the time it stood waiting
// for communication, each unit's compute span, the collectives' records, the socket bytes of its ring links,
// and the process's memory at the worst moments. One probe per step.
import type { Collectives } from '../../collectives/collectives.js';
import { busyTime, type CollectiveRecord } from '../../collectives/record.js';
import type { MemoryLedger } from '../../tensor/memory-ledger.js';
import { arrayBufferBytes, wasmMemoryBytes } from '../../tensor/wasm/memories.js';
import { arrivalMs, wireUse, type QueuedArrival, type WireUse } from '../../transport/wire-log.js';
import type { PeerChannel } from '../../transport/channel.js';
import { now } from '../../time/clock.js';

export interface StepStats {
  loss: number; // this rank's mean loss on its rows, before the update
  startMs: number; // now() when the step began
  stepMs: number;
  commMs: number; // wall time during which at least one collective was running
  exposedMs: number; // time the step stood waiting for a collective
  computeMs: number; // the step minus its exposed communication
  sentFrame: number; // socket bytes written to the next rank during the step
  recvFrame: number;
  records: CollectiveRecord[];
  units: UnitSpan[]; // each unit's forward and backward compute, then the optimizer, in order
  wire: WireUse; // bytes that really arrived from the previous rank, and how much of that overlapped compute
  processBytesPeak: number; // ArrayBuffers + WebAssembly memories, sampled at the worst moments
  pcie?: { d2h: number; h2d: number }; // offload: bytes copied between device and host (schemes/offload.ts)
}

export type ComputePass = 'forward' | 'backward' | 'optimizer';

/** One unit's forward or backward compute, or the optimizer update (unit 0), now() ms (waiting
 *  for parameters excluded). */
export interface UnitSpan {
  unit: number;
  pass: ComputePass;
  start: number;
  end: number;
}

export class StepProbe {
  private readonly t0 = now();
  private readonly sock0: { sent: number; recv: number };
  private exposedMs = 0;
  private processPeak = 0;
  private static arrayBuffers = -1; // last read (sample): the previous step's update, once there was one
  private readonly units: UnitSpan[] = [];
  /** Every ring's link from its previous rank: what arrives there is what can be hidden. */
  private readonly inbound: PeerChannel[];
  private readonly queued: QueuedArrival[] = [];

  constructor(
    private readonly colls: readonly Collectives[], // every ring the step's collectives run on
    ledger: MemoryLedger,
    private readonly otherThreadBytes: () => number, // memory the compute keeps on another thread
  ) {
    for (const c of colls) c.takeRecords(); // anything before this step (a barrier, a resume's all-gather) is not the step's
    this.inbound = colls.flatMap((c) => (c.ring.prev ? [c.ring.prev] : []));
    this.sock0 = this.socketBytes();
    ledger.resetPeak();
  }

  /** Await communication, counting the time the step stands still for it. */
  async wait<T>(p: Promise<T>): Promise<T> {
    const t = now();
    try {
      return await p;
    } finally {
      this.exposedMs += now() - t;
    }
  }

  /** Note the process's memory now: called at the moments it peaks (a unit's parameters are in, the update).
   *  The WebAssembly memories (model states, arena, receive buffers) are read every time; the ArrayBuffers
   *  (frames, staging) only at the update (`fresh`), the step's worst moment for them, and carried to the next
   *  step's samples (the first step's first sample reads them too):
   *  reading them costs a system call (wasm/memories.ts), which at 11 samples a step took 8 ms of a 70 ms step. */
  sample(fresh = false): void {
    if (fresh || StepProbe.arrayBuffers < 0) StepProbe.arrayBuffers = arrayBufferBytes();
    this.processPeak = Math.max(this.processPeak, StepProbe.arrayBuffers + wasmMemoryBytes() + this.otherThreadBytes());
  }

  /** Run one unit's compute for one pass, as a span. Where nothing was read from the links meanwhile (inline
   *  compute holds the event loop) and the kernel can be asked, what its receive queues gained is what arrived. */
  async unit(unit: number, pass: ComputePass, compute: () => Promise<void>): Promise<void> {
    const before = this.inbound.map((l) => (l.receiveQueue ? { queue: l.receiveQueue(), read: l.socketReceived() } : null));
    const start = now();
    await compute();
    const end = now();
    this.units.push({ unit, pass, start, end });
    let bytes = 0;
    let ms = 0; // the links deliver side by side: the longest of their arrivals
    for (const [i, l] of this.inbound.entries()) {
      const b = before[i];
      if (!b || l.socketReceived() !== b.read) return; // read meanwhile: its frames are timed as they were read
      const got = Math.max(0, l.receiveQueue!() - b.queue);
      bytes += got;
      ms = Math.max(ms, arrivalMs(got, l.arrivalMbit, end - start));
    }
    if (this.inbound.length) this.queued.push({ start, end, bytes, ms });
  }

  /** Run the optimizer update, as a span. */
  optimizer(update: () => Promise<void>): Promise<void> {
    return this.unit(0, 'optimizer', update);
  }

  finish(loss: number): StepStats {
    // One ring: in the order they ended, as always; several: merged by start, the order every rank issues them.
    const records = this.colls.length === 1 ? this.colls[0].takeRecords() : this.colls.flatMap((c) => c.takeRecords()).sort((a, b) => a.startMs - b.startMs);
    const stepMs = now() - this.t0;
    const sock = this.socketBytes();
    return {
      loss,
      startMs: this.t0,
      stepMs,
      commMs: busyTime(records),
      exposedMs: this.exposedMs,
      computeMs: stepMs - this.exposedMs,
      sentFrame: sock.sent - this.sock0.sent,
      recvFrame: sock.recv - this.sock0.recv,
      records,
      units: this.units,
      wire: wireUse(
        this.colls.flatMap((c) => c.ring.prev?.wire.since(this.t0) ?? []).map((w) => ({ ...w, start: Math.max(w.start, this.t0) })),
        this.units.map((u) => [u.start, u.end] as const),
        this.queued,
      ),
      processBytesPeak: this.processPeak,
    };
  }

  private socketBytes(): { sent: number; recv: number } {
    let sent = 0;
    let recv = 0;
    for (const { ring } of this.colls) {
      sent += ring.next?.socketSent() ?? 0;
      recv += ring.prev?.socketReceived() ?? 0;
    }
    return { sent, recv };
  }
}
