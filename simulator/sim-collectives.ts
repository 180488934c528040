// A simulated rank's collectives: the same calls, numbers and segment sizes as a ring's (the base class
// decides them), but instead of frames each collective waits at its group's rendezvous until every member has
// entered, and then for the time the network gives it (network/network.ts). Bytes are counted as the ring
// algorithm would send them, each segment cut to 1/linkScale as a what-if rank's are.
import { Collectives, type AllToAllParts, type CollectiveOptions } from '../shared/collectives/collectives.js';
import { measure, type CollectiveRecord, type Tally } from '../shared/collectives/record.js';
import { bytesPerElement, dtypeOf, type Elems, type WireDtype } from '../shared/tensor/dtype.js';
import type { Ring } from '../shared/transport/ring.js';
import type { Network, SimCall, SimKind } from './network/network.js';

interface Pending {
  entered: number;
  call: SimCall;
  release: (() => void)[];
}

/** One ring of the run (the run's, a shard group's, a cross or stride ring): its members in ring order, shared by
 *  their ranks' collectives, where each numbered collective waits for all of them. */
export class SimGroup {
  private readonly pending = new Map<number, Pending>();
  /** NCCL: the communicator's one stream. PyTorch's ProcessGroupNCCL runs every collective of a process group
   *  on one NCCL stream per device, so they run one after another in the order they were issued (DeepSpeed's
   *  ZeRO-3 gathers and reduce-scatters share the data-parallel group). zerowire's own rings run side by side. */
  private stream: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly members: readonly number[],
    private readonly network: Network,
  ) {}

  enter(coll: number, call: SimCall): Promise<void> {
    let p = this.pending.get(coll);
    if (!p) this.pending.set(coll, (p = { entered: 0, call, release: [] }));
    else if (p.call.kind !== call.kind || p.call.steps !== call.steps)
      throw new Error(`ring ${this.name}: collective ${coll} entered as ${p.call.kind} and as ${call.kind}: the ranks' schedules differ`);
    p.call = { ...p.call, segmentBytes: Math.max(p.call.segmentBytes, call.segmentBytes) };
    p.entered++;
    const done = new Promise<void>((r) => p.release.push(r));
    if (p.entered === this.members.length) {
      this.pending.delete(coll);
      const release = p.release;
      const run = () => this.network.run(this.members, p.call);
      const done = this.network.topology.transport === 'nccl' ? (this.stream = this.stream.then(run)) : run();
      void done.then(() => release.forEach((r) => r()));
    }
    return done;
  }

  /** The collectives some members wait in, for a stalled schedule's message. */
  waiting(): string[] {
    return [...this.pending].map(([coll, p]) => `${this.name} #${coll} (${p.call.kind}, ${p.entered} of ${this.members.length} entered)`);
  }
}

export class SimCollectives extends Collectives {
  constructor(
    ring: Ring,
    opts: CollectiveOptions,
    private readonly group: SimGroup,
  ) {
    super(ring, opts);
  }

  protected override allReduceRing(tally: Tally, buf: Elems, shardLen: number, steps: number): Promise<void> {
    return this.simulated(tally, 'all-reduce', shardLen, dtypeOf(buf), steps);
  }

  protected override reduceScatterRing(tally: Tally, _input: Elems, _output: Elems, S: number, dtype: WireDtype): Promise<void> {
    return this.simulated(tally, 'reduce-scatter', S, dtype, this.world - 1);
  }

  protected override allGatherRing(tally: Tally, _input: Elems, _output: Elems, S: number, dtype: WireDtype, coll?: number): Promise<void> {
    return this.simulated(tally, 'all-gather', S, dtype, this.world - 1, coll);
  }

  protected override shiftRing(tally: Tally, input: Elems, output: Elems, coll?: number): Promise<void> {
    return this.simulated(tally, 'shift', output.length, dtypeOf(output), 1, coll, input.length);
  }

  /** The K-1 shifts of an all-to-all as one operation, as NCCL groups its sends and receives: one rendezvous,
   *  one flow, one record (a shift on the first stride ring, carrying every segment's bytes). */
  override groupedAllToAll(K: number, me: number, parts: AllToAllParts, label: string): Promise<CollectiveRecord> {
    const first = parts.send((me + 1) % K);
    const b = bytesPerElement(dtypeOf(first));
    const cut = (n: number) => Math.ceil(n / (this.opts.linkScale ?? 1)) * b;
    let [sent, recv, most] = [0, 0, 0];
    if (parts.each !== undefined) [sent, recv, most] = [(K - 1) * cut(parts.each), (K - 1) * cut(parts.each), cut(parts.each)];
    else
      for (let i = 1; i < K; i++) {
        const out = cut(parts.send((me + i) % K).length);
        [sent, recv, most] = [sent + out, recv + cut(parts.into((me - i + K) % K).length), Math.max(most, out)];
      }
    const coll = this.nextNumber();
    const work = (tally: Tally) => {
      tally.sent.payload += sent;
      tally.recv.payload += recv;
      return this.group.enter(coll, { kind: 'all-to-all', segmentBytes: most, steps: K - 1 });
    };
    return measure(this.ring, 'shift', `${label} (all-to-all, grouped)`, first, work, true).then((r) => this.push(r));
  }

  private simulated(tally: Tally, kind: SimKind, S: number, dtype: WireDtype, steps: number, coll = this.nextNumber(), sent = S): Promise<void> {
    const b = bytesPerElement(dtype);
    const cut = (n: number) => Math.ceil(n / (this.opts.linkScale ?? 1)) * b;
    tally.sent.payload += steps * cut(sent);
    tally.recv.payload += steps * cut(S);
    return this.group.enter(coll, { kind, segmentBytes: cut(sent), steps });
  }
}
