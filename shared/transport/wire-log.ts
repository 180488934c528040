// When bytes really moved on a link: each received data frame, from the moment its envelope arrived to the
// moment its last byte did. A collective that is merely pending (its peer has not started, or is stalled)
// adds nothing here, so "communication hidden behind compute" can count only bytes that moved meanwhile.
export interface WireSpan {
  start: number; // performance.now() ms
  end: number;
  bytes: number; // payload
}

/**
 * Every frame of the current step, whatever their number (a 70B shape in bf16 at world 8 with 1 MiB chunks
 * sends about 224k frames a step): three growing columns, not a capped list that would drop the oldest and
 * read a step's rates low. The step's reader (schemes/step-probe.ts) asks for the frames since the step began,
 * and what ended before that is let go then.
 */
export class WireLog {
  private start = new Float64Array(1024);
  private end = new Float64Array(1024);
  private bytes = new Float64Array(1024);
  private n = 0;

  add(start: number, end: number, bytes: number): void {
    if (this.n === this.start.length) for (const k of ['start', 'end', 'bytes'] as const) this[k] = grow(this[k]);
    this.start[this.n] = start;
    this.end[this.n] = end;
    this.bytes[this.n++] = bytes;
  }

  /** Frames held now (for tests). */
  get size(): number {
    return this.n;
  }

  /** The spans that ended at or after `since`; the earlier ones are forgotten. */
  since(since: number): WireSpan[] {
    let i = this.n;
    while (i > 0 && this.end[i - 1] >= since) i--;
    const out: WireSpan[] = [];
    for (let k = i; k < this.n; k++) out.push({ start: this.start[k], end: this.end[k], bytes: this.bytes[k] });
    if (i > 0) {
      for (const col of [this.start, this.end, this.bytes]) col.copyWithin(0, i, this.n);
      this.n -= i;
    }
    return out;
  }
}

function grow(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

type Interval = readonly [number, number];

/** Intervals merged into a sorted, disjoint list. */
export function union(intervals: readonly Interval[]): [number, number][] {
  const sorted = [...intervals].filter(([a, b]) => b >= a).sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** Time covered by a sorted disjoint list. */
export const covered = (xs: readonly Interval[]) => xs.reduce((s, [a, b]) => s + (b - a), 0);

/** Time covered by both (each a sorted disjoint list). */
export function overlapMs(xs: readonly Interval[], ys: readonly Interval[]): number {
  let total = 0;
  for (let i = 0, j = 0; i < xs.length && j < ys.length;) {
    const a = Math.max(xs[i][0], ys[j][0]);
    const b = Math.min(xs[i][1], ys[j][1]);
    if (b > a) total += b - a;
    if (xs[i][1] < ys[j][1]) i++;
    else j++;
  }
  return total;
}

export interface WireUse {
  wireMs: number; // time during which some frame was arriving
  bytes: number;
  hiddenMs: number; // of the time data was arriving, how much compute ran during
  hiddenBytes: number; // bytes that arrived while compute ran (a frame straddling the edge, pro rata)
}

/** What a link's receive queue gained in the kernel during a compute span in which nothing was read (inline
 *  compute: kernel-queue.ts), and for how long of the span data was arriving. */
export interface QueuedArrival {
  start: number;
  end: number;
  bytes: number;
  ms: number;
}

/** How long `bytes` took to arrive during a span of `spanMs`: at the link's measured pace (Mbit/s of payload),
 *  no longer than the span; with no pace known, the span. */
export function arrivalMs(bytes: number, mbit: number | null, spanMs: number): number {
  if (bytes <= 0) return 0;
  return Math.min(spanMs, mbit ? (bytes * 8) / (mbit * 1e3) : Infinity);
}

/** How much of the link's real traffic happened during `compute` (intervals, any order). Frames are timed as
 *  they are read; compute spans for which the kernel's queue was read instead (`queued`: every span in which
 *  nothing was read, with what arrived meanwhile) count what the kernel saw, and not again from the frames. */
export function wireUse(spans: readonly WireSpan[], compute: readonly Interval[], queued: readonly QueuedArrival[] = []): WireUse {
  const seen = queued.map((q) => [q.start, q.end] as const);
  const busy = union(compute.filter(([a, b]) => !seen.some(([x, y]) => x === a && y === b)));
  const inside = (t: number) => busy.some(([a, b]) => t >= a && t <= b);
  let hiddenBytes = 0;
  for (const s of spans) {
    const d = s.end - s.start;
    hiddenBytes += d > 0 ? (s.bytes * overlapMs([[s.start, s.end]], busy)) / d : inside(s.end) ? s.bytes : 0;
  }
  const wire = union(spans.map((s) => [s.start, s.end] as const));
  let hiddenMs = overlapMs(wire, busy);
  for (const q of queued) {
    hiddenBytes += q.bytes;
    hiddenMs += Math.min(q.end - q.start, q.ms);
  }
  return { wireMs: covered(wire), bytes: spans.reduce((n, s) => n + s.bytes, 0), hiddenMs, hiddenBytes };
}
