// The collectives a scheme calls: reduce-scatter, all-gather, all-reduce and a barrier over one ring. Each
// call is numbered (every rank calls them in the same order, so the numbers pair up on the wire), measured
// (record.ts) and run as a ring exchange (exchange.ts) of one or two algorithm phases.
import { dtypeOf, emptyOf, paddedLength, type Elems, type WireDtype } from '../tensor/dtype.js';
import type { MemoryLedger } from '../tensor/memory-ledger.js';
import type { PeerChannel } from '../transport/channel.js';
import type { Ring } from '../transport/ring.js';
import { allGatherPhase, shiftPhase } from './all-gather.js';
import { allReducePhase } from './all-reduce.js';
import { Chunks } from './chunks.js';
import { exchange, type Phase, type Sender } from './exchange.js';
import { addTraffic, measure, type CollectiveRecord, type Tally } from './record.js';
import { reduceScatterPhase, type RingSeat } from './reduce-scatter.js';

export interface CollectiveOptions {
  chunkBytes: number;
  timeoutMs: number;
  ledger?: MemoryLedger; // staging copies are accounted in its 'comm' band
  /** A what-if rank's collectives carry 1/linkScale of each segment (rounded up): each link then stands for
   *  one linkScale times faster (--link-scale; shared/whatif/synthetic-collectives.ts). */
  linkScale?: number;
}

/** What an all-to-all moves: the segment for each rank and where each rank's lands. `each`, where every segment
 *  has that many elements both ways, lets a simulated rank count the bytes without a view per peer (a 128-host
 *  exchange has 127 of each). */
export interface AllToAllParts {
  send(to: number): Elems;
  into(from: number): Elems;
  each?: number;
}

/** The ring collectives on values. A what-if rank runs the same schedule without values
 *  (shared/whatif/synthetic-collectives.ts overrides the three ring runs); the rank's assembly picks one. */
export class Collectives {
  private seq = 0;
  /** Records since the last takeRecords() (a step takes them, so a long run does not accumulate them). */
  private records: CollectiveRecord[] = [];
  constructor(
    readonly ring: Ring,
    protected opts: CollectiveOptions,
  ) {
    // A variable all-gather takes N-1 numbers at once (all-gather-v.ts), for each half of a unit and each unit
    // gathered ahead: its first frames may come that far ahead of what this rank has finished.
    (ring.prev as PeerChannel | null)?.allowAhead?.(8 + 8 * (ring.world - 1));
  }

  get rank(): number {
    return this.ring.rank;
  }

  get world(): number {
    return this.ring.world;
  }

  /** Account staging copies to another ledger from now on (each scheme run keeps its own). */
  useLedger(ledger: MemoryLedger | undefined): void {
    this.opts.ledger = ledger;
  }

  /** Sum over ranks of `input` (length L); this rank receives segment `rank` (ceil(L/N) elements) in `output`.
   *  `output` may alias this rank's own segment of `input`. */
  async reduceScatter(input: Elems, output: Elems, label = ''): Promise<CollectiveRecord> {
    return this.push(await measure(this.ring, 'reduce-scatter', label, input, (t) => this.rs(t, input, output)));
  }

  /** Concatenate every rank's `input` (ceil(L/N) elements each) into `output` (length L; padding dropped). */
  /** `coll`: a number taken ahead with reserve(), where the gather starts later than it is decided. */
  async allGather(input: Elems, output: Elems, label = '', coll?: number): Promise<CollectiveRecord> {
    return this.push(await measure(this.ring, 'all-gather', label, output, (t) => this.ag(t, input, output, coll), coll !== undefined));
  }

  /** In-place sum over ranks: a reduce-scatter followed by an all-gather, fused into one ring when the
   *  length divides evenly (this rank's own segment of `buf` then holds the reduced shard in place). */
  async allReduce(buf: Elems, label = ''): Promise<CollectiveRecord> {
    const shardLen = paddedLength(buf.length, this.world) / this.world;
    if (shardLen * this.world === buf.length && this.world > 1) {
      const steps = 2 * (this.world - 1);
      return this.push(await measure(this.ring, 'all-reduce', label, buf, (t) => this.allReduceRing(t, buf, shardLen, steps)));
    }
    const ledger = this.opts.ledger;
    const shard = ledger ? ledger.alloc('comm', dtypeOf(buf), shardLen) : emptyOf(dtypeOf(buf), shardLen);
    try {
      const rs = await measure(this.ring, 'reduce-scatter', label, buf, (t) => this.rs(t, buf, shard));
      const ag = await measure(this.ring, 'all-gather', label, buf, (t) => this.ag(t, shard, buf));
      return this.push({ ...rs, kind: 'all-reduce', sent: addTraffic(rs.sent, ag.sent), recv: addTraffic(rs.recv, ag.recv), ms: rs.ms + ag.ms });
    } finally {
      ledger?.free(shard);
    }
  }

  /** One step of the ring: `input` to the next rank, the previous rank's `input` into `output` (its length is
   *  what the previous rank sends: the same on every rank for an all-to-all, all-to-all.ts; a rank's own for a
   *  variable all-gather, all-gather-v.ts). */
  async shift(input: Elems, output: Elems, label = '', coll?: number): Promise<CollectiveRecord> {
    if (dtypeOf(input) !== dtypeOf(output))
      throw new RangeError(`shift: input and output must be of one dtype, got ${dtypeOf(input)} of ${input.length} and ${dtypeOf(output)} of ${output.length}`);
    if (this.world === 1 && input.length !== output.length)
      throw new RangeError(`shift: one rank sends ${input.length} values to itself, expecting ${output.length}`);
    return this.push(
      await measure(
        this.ring,
        'shift',
        label,
        output,
        (t) => (this.world === 1 ? Promise.resolve(void output.set(input as never)) : this.shiftRing(t, input, output, coll)),
        coll !== undefined, // a number taken ahead must be used, even by an empty step
      ),
    );
  }

  /** Numbers for `n` collectives run later (shifts that wait on each other: all-gather-v.ts), taken now so
   *  that collectives started meanwhile are numbered alike on every rank. */
  reserve(n: number): number[] {
    const first = this.seq;
    this.seq += n;
    return Array.from({ length: n }, (_, k) => first + k);
  }

  /** Returns once every rank has entered the barrier. */
  async barrier(label = ''): Promise<CollectiveRecord> {
    const mine = new Float32Array([this.rank]);
    const all = new Float32Array(this.world);
    const r = await measure(this.ring, 'barrier', label, all, (t) => this.ag(t, mine, all));
    return this.push(r);
  }

  /** The records of every collective since the last call, and forget them. */
  takeRecords(): CollectiveRecord[] {
    const r = this.records;
    this.records = [];
    return r;
  }

  /** An all-to-all among K ranks as one grouped operation, or null: a ring's shifts are K-1 collectives of their
   *  own (all-to-all.ts); a simulated rank groups them as NCCL does. */
  groupedAllToAll(_K: number, _me: number, _parts: AllToAllParts, _label: string): Promise<CollectiveRecord> | null {
    return null;
  }

  protected push(r: CollectiveRecord): CollectiveRecord {
    this.records.push(r);
    // The receive buffers grow on first use and are then reused: accounted after each collective.
    const pool = this.ring.prev?.pool;
    if (pool) this.opts.ledger?.account('receive', pool, pool.reservedBytes);
    return r;
  }

  protected seat(): RingSeat {
    const ledger = this.opts.ledger;
    return {
      rank: this.rank,
      world: this.world,
      pool: (this.ring.prev as PeerChannel).pool,
      stage: (x) => (ledger ? [ledger.track('comm', x), () => ledger.free(x)] : [x, () => undefined]),
    };
  }

  /** The next collective's number (a simulated rank's collectives number theirs as the ring's do). */
  protected nextNumber(): number {
    return this.seq++;
  }

  protected run(tally: Tally, chunks: Chunks, steps: number, phase: Phase, coll = this.seq++): Promise<void> {
    return exchange({ ring: this.ring, coll, tally, timeoutMs: this.opts.timeoutMs, chunks, steps, phase });
  }

  /** The fused all-reduce's ring over `buf` (its length `shardLen` times the world). */
  protected allReduceRing(tally: Tally, buf: Elems, shardLen: number, steps: number): Promise<void> {
    const chunks = new Chunks(shardLen, this.opts.chunkBytes, dtypeOf(buf));
    return this.run(tally, chunks, steps, allReducePhase(this.seat(), buf, chunks));
  }

  /** The reduce-scatter's ring: segments of S elements, this rank's sum into `output`. */
  protected reduceScatterRing(tally: Tally, input: Elems, output: Elems, S: number, dtype: WireDtype): Promise<void> {
    const chunks = new Chunks(S, this.opts.chunkBytes, dtype);
    return this.run(tally, chunks, this.world - 1, reduceScatterPhase(this.seat(), input, output, chunks));
  }

  /** The shift's one step: every chunk of `input` out, every chunk from the previous rank into `output`. */
  protected shiftRing(tally: Tally, input: Elems, output: Elems, coll?: number): Promise<void> {
    const chunks = new Chunks(output.length, this.opts.chunkBytes, dtypeOf(output));
    const sends = new Chunks(input.length, this.opts.chunkBytes, dtypeOf(input));
    return this.run(tally, chunks, 1, shiftPhase(this.seat(), input, output, chunks, sends), coll);
  }

  /** The all-gather's ring, once this rank's own segment is in place in `output`. */
  protected allGatherRing(tally: Tally, input: Elems, output: Elems, S: number, dtype: WireDtype, coll?: number): Promise<void> {
    const chunks = new Chunks(S, this.opts.chunkBytes, dtype);
    const phase = allGatherPhase(this.seat(), output, chunks);
    const start = (send: Sender) => {
      for (let j = 0; j < chunks.count; j++) send(0, j, chunks.of(input, j));
    };
    return this.run(tally, chunks, this.world - 1, { ...phase, start }, coll);
  }

  private rs(tally: Tally, input: Elems, output: Elems): Promise<void> {
    const N = this.world;
    const S = paddedLength(input.length, N) / N;
    const dtype = dtypeOf(input);
    if (dtypeOf(output) !== dtype || output.length !== S)
      throw new RangeError(`reduce-scatter output must be ${dtype} of ${S} elements, got ${dtypeOf(output)} of ${output.length}`);
    if (N === 1) {
      if (output !== input) output.set(input as never);
      return Promise.resolve();
    }
    return this.reduceScatterRing(tally, input, output, S, dtype);
  }

  private ag(tally: Tally, input: Elems, output: Elems, coll?: number): Promise<void> {
    const N = this.world;
    const S = paddedLength(output.length, N) / N;
    const dtype = dtypeOf(output);
    if (dtypeOf(input) !== dtype || input.length !== S)
      throw new RangeError(`all-gather input must be ${dtype} of ${S} elements, got ${dtypeOf(input)} of ${input.length}`);
    const aliased = input.buffer === output.buffer && input.byteOffset === output.byteOffset + this.rank * S * input.BYTES_PER_ELEMENT;
    const mine = Math.min(S, output.length - this.rank * S); // the last segments may be cut short, or empty
    if (!aliased && mine > 0) output.set(input.subarray(0, mine) as never, this.rank * S);
    if (N === 1) return Promise.resolve();
    return this.allGatherRing(tally, input, output, S, dtype, coll);
  }
}
