// When bytes really moved on a link: each received data frame, from the moment its envelope arrived to the
// moment its last byte did. A collective that is merely pending (its peer has not started, or is stalled)
// adds nothing here, so "communication hidden behind compute" can count only bytes that moved meanwhile.
export interface WireSpan {
  start: number; // performance.now() ms
  end: number;
  bytes: number; // payload
}

/** Spans kept: enough for a step of any run we make (a step is read out at its end). */
const KEEP = 1 << 16;

export class WireLog {
  private spans: WireSpan[] = [];

  add(start: number, end: number, bytes: number): void {
    if (this.spans.length >= KEEP) this.spans.splice(0, KEEP / 2);
    this.spans.push({ start, end, bytes });
  }

  /** The spans that ended at or after `since`. */
  since(since: number): WireSpan[] {
    let i = this.spans.length;
    while (i > 0 && this.spans[i - 1].end >= since) i--;
    return this.spans.slice(i);
  }
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

const length = (xs: readonly Interval[]) => xs.reduce((s, [a, b]) => s + (b - a), 0);

/** Time covered by both (each a sorted disjoint list). */
function overlapMs(xs: readonly Interval[], ys: readonly Interval[]): number {
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
  hiddenMs: number; // of wireMs, the time during which compute ran too
  hiddenBytes: number; // bytes that arrived while compute ran (a frame straddling the edge, pro rata)
}

/** How much of the link's real traffic happened during `compute` (intervals, any order). */
export function wireUse(spans: readonly WireSpan[], compute: readonly Interval[]): WireUse {
  const busy = union(compute);
  const inside = (t: number) => busy.some(([a, b]) => t >= a && t <= b);
  let hiddenBytes = 0;
  for (const s of spans) {
    const d = s.end - s.start;
    hiddenBytes += d > 0 ? (s.bytes * overlapMs([[s.start, s.end]], busy)) / d : inside(s.end) ? s.bytes : 0;
  }
  const wire = union(spans.map((s) => [s.start, s.end] as const));
  return { wireMs: length(wire), bytes: spans.reduce((n, s) => n + s.bytes, 0), hiddenMs: overlapMs(wire, busy), hiddenBytes };
}
