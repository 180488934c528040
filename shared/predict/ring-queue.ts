// The alpha-beta model of one ring's collectives, queued as on a stream: the step predictor's (step-prediction.ts)
// and ZeRO++'s rings in it (zeropp-prediction.ts).
/** A ring link: its rate each way and its latency per ring step. */
export interface Link {
  gbit: number;
  latencyUs: number;
}

/** Bytes on the link per payload byte: Ethernet, IP and TCP headers (66 B with timestamps) on each 1448-byte
 *  segment of a 1500-byte MTU. */
const TCP_OVERHEAD = 1514 / 1448;
/** A frame's envelope and WebSocket headers, bytes per chunk sent. */
const FRAME_BYTES = 48;

/** One ring's queue of collectives: each starts when it is issued and the one before it has finished. */
export class RingQueue {
  private free = 0;
  busy = 0;

  constructor(
    private readonly link: Link,
    private readonly world: number,
    private readonly chunkBytes: number,
    private readonly linkScale: number,
  ) {}

  /** A reduce-scatter or all-gather (passes 1) or all-reduce (passes 2) of `padded` elements of `b` bytes,
   *  issued at `at`; returns when it ends. */
  run(at: number, padded: number, b: number, passes: 1 | 2): number {
    const N = this.world;
    if (N < 2) return at;
    const segment = Math.ceil(padded / N / this.linkScale) * b; // --link-scale K: 1/K of it on the wire
    const chunks = Math.ceil(segment / this.chunkBytes);
    const bytes = passes * (N - 1) * (segment + chunks * FRAME_BYTES) * TCP_OVERHEAD;
    const ms = passes * (N - 1) * (this.link.latencyUs / 1000) + ((bytes * 8) / (this.link.gbit * 1e9)) * 1000;
    const start = Math.max(at, this.free);
    this.free = start + ms;
    this.busy += ms;
    return this.free;
  }
}
