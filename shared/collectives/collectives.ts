// Ring collectives over a Ring of PeerChannels: reduce-scatter, all-gather, all-reduce, broadcast, barrier.
// Each segment is cut into chunks that are pipelined: a chunk is reduced and forwarded as soon as it
// arrives, so receiving, adding and sending overlap across the N-1 ring steps.
import type { BufferPool } from '../transport/buffer-pool.js';
import { addTraffic, zeroTraffic, type PeerChannel } from '../transport/channel.js';
import { bytesOf, bytesPerElement, dtypeOf, paddedLength, type Elems, type WireDtype } from '../tensor/dtype.js';
import { payloadAsBf16, payloadAsF32, type ChunkFrame, type ChunkHeader } from '../transport/frame.js';
import type { MemoryLedger } from '../tensor/memory-ledger.js';
import type { Traffic } from '../control/messages.js';
import type { Ring } from '../transport/ring.js';
import { ProtocolError } from '../control/schema.js';

export type CollectiveKind = 'reduce-scatter' | 'all-gather' | 'all-reduce' | 'broadcast' | 'barrier';

export interface CollectiveRecord {
  kind: CollectiveKind;
  label: string;
  elements: number; // the caller's length
  padded: number; // what travelled: a multiple of the world size
  dtype: WireDtype;
  sent: Traffic; // to the next rank
  recv: Traffic; // from the previous rank
  startMs: number; // performance.now() at the start
  ms: number;
}

export interface CollectiveOptions {
  chunkBytes: number;
  timeoutMs: number;
  ledger?: MemoryLedger; // staging copies are accounted in its 'comm' band
}

export class CollectiveError extends Error {
  override name = 'CollectiveError';
}

const mod = (a: number, n: number) => ((a % n) + n) % n;

/** Chunking of one segment of S elements. */
class Chunks {
  readonly size: number;
  readonly count: number;
  constructor(readonly segment: number, chunkBytes: number, dtype: WireDtype) {
    this.size = Math.max(1, Math.floor(chunkBytes / bytesPerElement(dtype)));
    this.count = Math.ceil(segment / this.size);
  }
  start(j: number): number {
    return j * this.size;
  }
  length(j: number): number {
    return Math.min(this.segment, (j + 1) * this.size) - j * this.size;
  }
  /** Chunk j of a segment-sized array. */
  of<T extends Elems>(x: T, j: number): T {
    return x.subarray(this.start(j), this.start(j) + this.length(j)) as T;
  }
}

/** A received payload as elements of its dtype, in place where alignment allows. */
function payloadView(dtype: WireDtype, p: Uint8Array): Elems {
  return dtype === 'fp32' ? payloadAsF32(p) : payloadAsBf16(p);
}

/** Whether `data` already is `target` from element `at` on (a payload that was read in place). */
function isViewOf(data: Elems, target: Elems, at: number): boolean {
  return data.buffer === target.buffer && data.byteOffset === target.byteOffset + at * target.BYTES_PER_ELEMENT;
}

/** Forward a received chunk to the next step (or not), and give its buffer back to the pool once the socket
 *  no longer needs it (a chunk read in place is the caller's memory: the pool ignores it). */
function passOn(pool: BufferPool, f: ChunkFrame, data: Elems, forward: boolean, send: Sender): void {
  const release = () => pool.give(f.payload);
  if (forward) send(f.step + 1, f.chunk, data, release);
  else release();
}

/** Copy elements [from, from+n) of `src` as wire bytes, zero beyond `src.length` (the padding). */
function padSlice(src: Elems, from: number, n: number): Elems {
  const end = Math.min(src.length, from + n);
  const out = src instanceof Float32Array ? new Float32Array(n) : new Uint16Array(n);
  if (end > from) out.set(src.subarray(from, end) as never);
  return out;
}

/** acc[i] += src[from + i] for the part inside src (beyond it the padding adds zero); bf16 sums are taken in
 *  fp32 and rounded once. `acc` and `src` have the same dtype. */
function addInto(pool: BufferPool, acc: Elems, src: Elems, from: number): void {
  const n = Math.max(0, Math.min(acc.length, src.length - from));
  if (acc instanceof Float32Array) pool.addInto(acc, (src as Float32Array).subarray(from, from + n), n);
  else pool.addBf16Into(acc, (src as Uint16Array).subarray(from, from + n), n);
}

export class Collectives {
  private seq = 0;
  /** Records since the last takeRecords() (a step takes them, so a long run does not accumulate them). */
  private records: CollectiveRecord[] = [];

  constructor(
    readonly ring: Ring,
    private opts: CollectiveOptions,
  ) {}

  get rank(): number {
    return this.ring.rank;
  }

  /** Account staging copies to another ledger from now on (each scheme run keeps its own). */
  useLedger(ledger: MemoryLedger | undefined): void {
    this.opts.ledger = ledger;
  }

  get world(): number {
    return this.ring.world;
  }

  /** Where this rank's received chunks land when not in place: the incoming link's pool. */
  private get rxPool(): BufferPool {
    return (this.ring.prev as PeerChannel).pool;
  }

  /** Sum over ranks of `input` (length L); this rank receives segment `rank` (ceil(L/N) elements) in `output`.
   *  `output` may alias this rank's own segment of `input`. */
  async reduceScatter(input: Elems, output: Elems, label = ''): Promise<CollectiveRecord> {
    return this.push(await this.measure('reduce-scatter', label, input, (c, t) => this.rs(c, t, input, output)));
  }

  /** Concatenate every rank's `input` (ceil(L/N) elements each) into `output` (length L; padding dropped). */
  async allGather(input: Elems, output: Elems, label = ''): Promise<CollectiveRecord> {
    return this.push(await this.measure('all-gather', label, output, (c, t) => this.ag(c, t, input, output)));
  }

  /** In-place sum over ranks: a reduce-scatter followed by an all-gather. */
  async allReduce(buf: Elems, label = ''): Promise<CollectiveRecord> {
    const shardLen = paddedLength(buf.length, this.world) / this.world;
    // When the length divides evenly, this rank's own segment of `buf` holds the reduced shard in place.
    const inPlace = shardLen * this.world === buf.length;
    const shard = inPlace ? buf.subarray(this.rank * shardLen, (this.rank + 1) * shardLen) : this.opts.ledger ? this.opts.ledger.alloc('comm', dtypeOf(buf), shardLen) : dtypeOf(buf) === 'fp32' ? new Float32Array(shardLen) : new Uint16Array(shardLen);
    if (inPlace && this.world > 1) return this.push(await this.measure('all-reduce', label, buf, (c, t) => this.ar(c, t, buf)));
    try {
      const rs = await this.measure('reduce-scatter', label, buf, (c, t) => this.rs(c, t, buf, shard));
      const ag = await this.measure('all-gather', label, buf, (c, t) => this.ag(c, t, shard, buf));
      return this.push({ ...rs, kind: 'all-reduce', sent: addTraffic(rs.sent, ag.sent), recv: addTraffic(rs.recv, ag.recv), ms: rs.ms + ag.ms });
    } finally {
      if (!inPlace) this.opts.ledger?.free(shard);
    }
  }

  /** Copy `buf` from rank `root` to every rank, pipelined around the ring. */
  async broadcast(buf: Elems, root: number, label = ''): Promise<CollectiveRecord> {
    if (!Number.isInteger(root) || root < 0 || root >= this.world) throw new RangeError(`broadcast root ${root} is not a rank of a world of ${this.world}`);
    return this.push(await this.measure('broadcast', label, buf, (c, t) => this.bcast(c, t, buf, root), buf.length));
  }

  /** Returns once every rank has entered the barrier. */
  async barrier(label = ''): Promise<CollectiveRecord> {
    const mine = new Float32Array([this.rank]);
    const all = new Float32Array(this.world);
    const r = await this.measure('barrier', label, all, (c, t) => this.ag(c, t, mine, all));
    return this.push({ ...r, kind: 'barrier' });
  }

  /** The records of every collective since the last call, and forget them. */
  takeRecords(): CollectiveRecord[] {
    const r = this.records;
    this.records = [];
    return r;
  }

  private push(r: CollectiveRecord): CollectiveRecord {
    this.records.push(r);
    return r;
  }

  /**
   * Run one collective and record what it cost. Payload and envelope bytes are counted frame by frame for
   * this collective alone; `frame` is the socket's byte count over the collective's lifetime, which is exact
   * when collectives run one at a time and includes a concurrent one's bytes when they overlap (prefetch).
   */
  private async measure(kind: CollectiveKind, label: string, sized: Elems, work: (coll: number, tally: Tally) => Promise<void>, padded?: number): Promise<CollectiveRecord> {
    const { next, prev } = this.ring;
    const t0 = performance.now();
    const sent0 = next?.sent().frame ?? 0;
    const recv0 = prev?.received().frame ?? 0;
    const tally: Tally = { sent: zeroTraffic(), recv: zeroTraffic() };
    if (sized.length > 0) await work(this.world > 1 ? this.seq++ : -1, tally);
    return {
      kind,
      label,
      elements: sized.length,
      padded: padded ?? paddedLength(sized.length, this.world),
      dtype: dtypeOf(sized),
      sent: { ...tally.sent, frame: next ? next.sent().frame - sent0 : 0 },
      recv: { ...tally.recv, frame: prev ? prev.received().frame - recv0 : 0 },
      startMs: t0,
      ms: performance.now() - t0,
    };
  }

  /**
   * Run one collective's frame exchange. `start` sends what this rank opens with; `onFrame` handles each
   * received frame and returns true when the last expected one has arrived. The collective ends only when
   * every frame has been received and every frame we sent has been written to the socket, so callers may
   * reuse their buffers as soon as it resolves.
   */
  private exchange(coll: number, tally: Tally, slots: number, expected: number, dtype: WireDtype, chunks: Chunks, start: (send: Sender) => void, onFrame: (f: ChunkFrame, send: Sender) => void, destination?: Destination): Promise<void> {
    const next = this.ring.next as PeerChannel;
    const prev = this.ring.prev as PeerChannel;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let received = 0;
      let unwritten = 0;
      const seen = new Uint8Array(slots);
      const cleanups: (() => void)[] = [];
      const finish = (err?: Error) => {
        if (settled) return;
        if (!err && (received < expected || unwritten > 0)) return;
        settled = true;
        clearTimeout(timer);
        for (const c of cleanups) c();
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => {
        const e = new CollectiveError(`collective ${coll} on rank ${this.rank} timed out after ${this.opts.timeoutMs} ms: ${received}/${expected} frames from rank ${prev.peerRank}, ${unwritten} frames to rank ${next.peerRank} not yet written`);
        finish(e);
        prev.abort(e);
        next.abort(e);
      }, this.opts.timeoutMs);
      const send: Sender = (step, chunk, data, written) => {
        unwritten++;
        tally.sent.payload += data.byteLength;
        tally.sent.envelope += next.send({ coll, step, chunk, dtype, elements: data.length }, bytesOf(data), () => {
          unwritten--;
          written?.();
          finish();
        });
      };
      // Checked when the envelope arrives (before its payload is read anywhere) and again on delivery,
      // since frames that arrived before this collective started skip the first check.
      const check = (h: ChunkHeader) => {
        if (h.dtype !== dtype) throw new ProtocolError(`frame dtype ${h.dtype}, expected ${dtype}`);
        if (h.chunk >= chunks.count || h.elements !== chunks.length(h.chunk)) throw new ProtocolError(`frame chunk ${h.chunk} with ${h.elements} elements does not fit a segment of ${chunks.segment}`);
        const slot = h.step * chunks.count + h.chunk;
        if (slot >= slots || seen[slot]) throw new ProtocolError(`unexpected or repeated frame: step ${h.step}, chunk ${h.chunk}`);
        return slot;
      };
      cleanups.push(prev.onFailure(finish), next.onFailure(finish));
      try {
        start(send);
        cleanups.push(
          prev.listen(coll, {
            destination: (h) => (check(h), destination?.(h) ?? null),
            frame: (f) => {
              seen[check(f)] = 1;
              tally.recv.payload += f.payload.byteLength;
              tally.recv.envelope += f.envelopeBytes;
              onFrame(f, send);
              received++;
              finish();
            },
          }),
        );
        finish(); // nothing to receive and nothing sent (a broadcast root with an empty chunk list)
      } catch (err) {
        finish(err as Error);
      }
    });
  }

  /** Reduce-scatter and all-gather: every chunk of every one of the N-1 ring steps arrives exactly once. */
  private ringExchange(coll: number, tally: Tally, dtype: WireDtype, chunks: Chunks, start: (send: Sender) => void, onFrame: (f: ChunkFrame, send: Sender) => void, destination?: Destination): Promise<void> {
    const frames = (this.world - 1) * chunks.count;
    return this.exchange(coll, tally, frames, frames, dtype, chunks, start, onFrame, destination);
  }

  /** Track a staging copy in the ledger; the returned callback frees it once it is written to the socket. */
  private stage<T extends Elems>(x: T): [T, () => void] {
    const ledger = this.opts.ledger;
    return ledger ? [ledger.track('comm', x), () => ledger.free(x)] : [x, () => undefined];
  }

  private rs(coll: number, tally: Tally, input: Elems, output: Elems): Promise<void> {
    const N = this.world;
    const S = paddedLength(input.length, N) / N;
    const dtype = dtypeOf(input);
    if (dtypeOf(output) !== dtype || output.length !== S) throw new RangeError(`reduce-scatter output must be ${dtype} of ${S} elements, got ${dtypeOf(output)} of ${output.length}`);
    if (N === 1) {
      if (output !== input) output.set(input as never);
      return Promise.resolve();
    }
    const chunks = new Chunks(S, this.opts.chunkBytes, dtype);
    const phase = this.reduceScatterPhase(input, output, chunks);
    return this.ringExchange(coll, tally, dtype, chunks, phase.start, phase.frame, phase.destination);
  }

  private ag(coll: number, tally: Tally, input: Elems, output: Elems): Promise<void> {
    const N = this.world;
    const S = paddedLength(output.length, N) / N;
    const dtype = dtypeOf(output);
    if (dtypeOf(input) !== dtype || input.length !== S) throw new RangeError(`all-gather input must be ${dtype} of ${S} elements, got ${dtypeOf(input)} of ${input.length}`);
    const aliased = input.buffer === output.buffer && input.byteOffset === output.byteOffset + this.rank * S * input.BYTES_PER_ELEMENT;
    const mine = Math.min(S, output.length - this.rank * S); // the last segments may be cut short, or empty
    if (!aliased && mine > 0) output.set(input.subarray(0, mine) as never, this.rank * S);
    if (N === 1) return Promise.resolve();
    const chunks = new Chunks(S, this.opts.chunkBytes, dtype);
    const phase = this.allGatherPhase(output, chunks);
    const start = (send: Sender) => {
      for (let j = 0; j < chunks.count; j++) send(0, j, chunks.of(input, j));
    };
    return this.ringExchange(coll, tally, dtype, chunks, start, phase.frame, phase.destination);
  }

  /**
   * All-reduce of an evenly divisible `buf` as one pipelined ring of 2(N-1) steps: as soon as a chunk of this
   * rank's segment is fully reduced it goes out as the all-gather's first step, instead of waiting for the
   * whole reduce-scatter to finish. Steps N-1 .. 2N-3 on the wire are the all-gather's 0 .. N-2.
   */
  private ar(coll: number, tally: Tally, buf: Elems): Promise<void> {
    const N = this.world;
    const S = buf.length / N;
    const dtype = dtypeOf(buf);
    const chunks = new Chunks(S, this.opts.chunkBytes, dtype);
    const own = buf.subarray(this.rank * S, (this.rank + 1) * S) as Elems;
    const AG = N - 1; // the all-gather's step 0 on the wire
    let gatherSend: Sender = () => undefined;
    const reduce = this.reduceScatterPhase(buf, own, chunks, (j) => gatherSend(0, j, chunks.of(own, j)));
    const gather = this.allGatherPhase(buf, chunks);
    const shifted = <H extends ChunkHeader>(h: H): H => ({ ...h, step: h.step - AG });
    const frames = 2 * (N - 1) * chunks.count;
    return this.exchange(
      coll,
      tally,
      frames,
      frames,
      dtype,
      chunks,
      (send) => {
        gatherSend = (step, chunk, data, written) => send(step + AG, chunk, data, written);
        reduce.start(send);
      },
      (f, send) => (f.step < AG ? reduce.frame(f, send) : gather.frame(shifted(f), gatherSend)),
      (h) => (h.step < AG ? reduce.destination(h) : gather.destination(shifted(h))),
    );
  }

  /**
   * Ring reduce-scatter, frame by frame. Step k: send segment r-k-1, receive segment r-k-2; the last step
   * (N-2) receives segment r. Received chunks land in pooled buffers, are summed in place and forwarded, or
   * at the last step written to `output` (then `reduced(chunk)` is told). `output` may alias `input`'s own
   * segment.
   */
  private reduceScatterPhase(input: Elems, output: Elems, chunks: Chunks, reduced?: (chunk: number) => void): Phase {
    const N = this.world;
    const r = this.rank;
    const L = input.length;
    const S = chunks.segment;
    const dtype = dtypeOf(input);
    const pool = this.rxPool;
    return {
      start: (send) => {
        const seg = mod(r - 1, N);
        for (let j = 0; j < chunks.count; j++) {
          const from = seg * S + chunks.start(j);
          const n = chunks.length(j);
          if (from + n <= L) send(0, j, input.subarray(from, from + n));
          else send(0, j, ...this.stage(padSlice(input, from, n)));
        }
      },
      frame: (f, send) => {
        const seg = mod(r - f.step - 2, N);
        const a = chunks.start(f.chunk);
        const acc = payloadView(dtype, f.payload); // the received chunk is ours: reduce into it in place
        addInto(pool, acc, input, seg * S + a);
        if (f.step < N - 2) return send(f.step + 1, f.chunk, acc, () => pool.give(f.payload));
        output.set(acc as never, a);
        pool.give(f.payload);
        reduced?.(f.chunk);
      },
      destination: (h) => pool.take(h.elements * bytesPerElement(dtype)),
    };
  }

  /**
   * Ring all-gather, frame by frame. Step k: receive segment r-k-1 and pass it on unchanged at step k+1.
   * Chunks are read straight into their place in `output` where they fit whole (all but a cut-off last
   * segment); the first step's sends are the caller's.
   */
  private allGatherPhase(output: Elems, chunks: Chunks): Phase {
    const N = this.world;
    const r = this.rank;
    const L = output.length;
    const S = chunks.segment;
    const dtype = dtypeOf(output);
    const pool = this.rxPool;
    const at = (h: ChunkHeader) => mod(r - h.step - 1, N) * S + chunks.start(h.chunk);
    return {
      start: () => undefined,
      frame: (f, send) => {
        const data = payloadView(dtype, f.payload);
        // Not read in place: it arrived before this collective started, or does not fit whole (the padding
        // of a cut-off last segment is dropped).
        const n = Math.min(data.length, L - at(f));
        if (!isViewOf(data, output, at(f)) && n > 0) output.set(data.subarray(0, n) as never, at(f));
        passOn(pool, f, data, f.step < N - 2, send);
      },
      destination: (h) => (at(h) + h.elements <= L ? bytesOf(output.subarray(at(h), at(h) + h.elements)) : null),
    };
  }

  private bcast(coll: number, tally: Tally, buf: Elems, root: number): Promise<void> {
    const N = this.world;
    const r = this.rank;
    const dtype = dtypeOf(buf);
    if (N === 1) return Promise.resolve();
    const chunks = new Chunks(buf.length, this.opts.chunkBytes, dtype);
    const hop = mod(r - root - 1, N); // the step at which frames reach this rank
    const forwards = mod(r + 1 - root, N) !== 0;
    // Frames carry their hop count as the step; this rank expects exactly step `hop`.
    return this.exchange(
      coll,
      tally,
      r === root ? 0 : (hop + 1) * chunks.count,
      r === root ? 0 : chunks.count,
      dtype,
      chunks,
      (send) => {
        if (r !== root) return;
        for (let j = 0; j < chunks.count; j++) send(0, j, chunks.of(buf, j));
      },
      (f, send) => {
        if (f.step !== hop) throw new ProtocolError(`broadcast frame at hop ${f.step}, expected hop ${hop}`);
        const data = payloadView(dtype, f.payload);
        if (!isViewOf(data, buf, chunks.start(f.chunk))) buf.set(data as never, chunks.start(f.chunk));
        passOn(this.rxPool, f, data, forwards, send);
      },
      (h) => (h.step === hop ? bytesOf(chunks.of(buf, h.chunk)) : null),
    );
  }
}

/** Send one chunk; `written` runs once the socket no longer needs `data`. */
type Sender = (step: number, chunk: number, data: Elems, written?: () => void) => void;

/** Where a frame's payload should be read to, or null for a buffer of its own. */
type Destination = (h: ChunkHeader) => Uint8Array | null;

/** One ring algorithm's part of an exchange: its first sends, its handling of each frame, and where payloads
 *  land. Steps are the phase's own. */
interface Phase {
  start: (send: Sender) => void;
  frame: (f: ChunkFrame, send: Sender) => void;
  destination: Destination;
}

/** Bytes of one collective, counted as its frames go out and come in. */
interface Tally {
  sent: Traffic;
  recv: Traffic;
}
