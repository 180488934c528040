// Links shared by the transfers in flight: each transfer is a fluid flow of bytes with its own most rate (its
// algorithm's and protocol's), drawing on resources (a host's NICs, the link inside a host) in proportion to
// its bytes. Rates are max-min fair (progressive filling), recomputed once per moment at which flows start or
// end (all the ranks of a schedule start theirs at one moment); time is the clock's (shared/time/clock.ts),
// virtual under the simulator.
import { now, sleep, turn } from '../../shared/time/clock.js';
import type { TokenBuckets } from './token-bucket.js';

export interface FlowSpec {
  bytes: number; // of the flow's own measure (bus bytes per rank)
  capBytesPerMs: number; // its most rate alone (Infinity: the resources decide)
  demands: Map<string, number>; // resource -> its bytes per byte of the flow
}

interface Flow extends FlowSpec {
  remaining: number;
  rate: number; // bytes per ms
  frozen: boolean;
  done: () => void;
}

interface Drawn {
  left: number; // capacity not yet given out
  draw: number; // summed demand of the flows still rising
  flows: Flow[];
}

export class Fluid {
  private flows: Flow[] = [];
  private last = 0;
  private generation = 0;
  private pending = false;

  constructor(
    private readonly base: (resource: string) => number,
    private readonly buckets: TokenBuckets | null = null, // shaped links (token-bucket.ts)
  ) {}

  /** What resource `r` carries now (a shaped link's depends on its bucket). */
  private capacity(r: string): number {
    const c = this.base(r);
    return this.buckets ? this.buckets.capacity(r, c) : c;
  }

  /** Bytes per ms each resource carries at the flows' present rates. */
  private use(): Map<string, number> {
    const u = new Map<string, number>();
    for (const f of this.flows) for (const [r, d] of f.demands) u.set(r, (u.get(r) ?? 0) + f.rate * d);
    return u;
  }

  /** Resolves when the flow's bytes are through. */
  transfer(spec: FlowSpec): Promise<void> {
    if (spec.bytes <= 0) return Promise.resolve();
    return new Promise<void>((done) => {
      this.advance();
      this.flows.push({ ...spec, remaining: spec.bytes, rate: 0, frozen: false, done });
      this.touch();
    });
  }

  /** The flows changed: rates are given out again once this moment's other changes are in. */
  private touch(): void {
    this.generation++; // a finish scheduled on the old rates is void
    if (this.pending) return;
    this.pending = true;
    void turn().then(() => {
      this.pending = false;
      this.advance();
      this.allocate();
      this.schedule();
    });
  }

  private advance(): void {
    const t = now();
    const dt = t - this.last;
    this.last = t;
    if (dt <= 0) return;
    this.buckets?.advance(dt, this.use());
    for (const f of this.flows) f.remaining -= f.rate * dt;
  }

  /** Progressive filling: the rising flows share one rate, which rises until a flow reaches its own cap or a
   *  resource is full; those flows stop there, the rest rise on. */
  private allocate(): void {
    const res = new Map<string, Drawn>();
    for (const f of this.flows) {
      f.rate = 0;
      f.frozen = false;
      for (const [r, d] of f.demands) {
        let x = res.get(r);
        if (!x) res.set(r, (x = { left: this.capacity(r), draw: 0, flows: [] }));
        x.draw += d;
        x.flows.push(f);
      }
    }
    const byCap = this.flows.filter((f) => Number.isFinite(f.capBytesPerMs)).sort((a, b) => a.capBytesPerMs - b.capBytesPerMs);
    let [level, open, c] = [0, this.flows.length, 0];
    const freeze = (f: Flow) => {
      if (f.frozen) return;
      f.frozen = true;
      f.rate = level;
      open--;
      for (const [r, d] of f.demands) res.get(r)!.draw -= d;
    };
    while (open > 0) {
      while (c < byCap.length && byCap[c].frozen) c++;
      let delta = c < byCap.length ? byCap[c].capBytesPerMs - level : Infinity;
      for (const x of res.values()) if (x.draw > 1e-9) delta = Math.min(delta, x.left / x.draw);
      if (!Number.isFinite(delta)) throw new Error('a transfer draws on no resource and has no rate of its own');
      level += Math.max(0, delta);
      for (const x of res.values()) x.left -= delta * Math.max(0, x.draw);
      while (c < byCap.length && (byCap[c].frozen || byCap[c].capBytesPerMs <= level * (1 + 1e-12))) freeze(byCap[c++]);
      for (const [r, x] of res) {
        if (x.draw > 1e-9 && x.left <= 1e-9 * this.capacity(r)) for (const f of x.flows) freeze(f);
        if (x.draw <= 1e-9) res.delete(r);
      }
    }
  }

  private schedule(): void {
    let next = Infinity;
    for (const f of this.flows) next = Math.min(next, Math.max(0, f.remaining) / f.rate);
    if (this.buckets) next = Math.min(next, this.buckets.untilEmpty(this.use())); // a bucket runs dry: rates change
    if (!Number.isFinite(next)) return;
    const gen = this.generation;
    void sleep(next).then(() => {
      if (gen !== this.generation) return; // the flows changed since: scheduled again then (a bucket's turn too)
      this.advance();
      // through: what is left would take under a nanosecond (a smaller step would not move a clock at 1e4 ms)
      const through = (f: Flow) => f.remaining <= Math.max(1e-9 * f.bytes, f.rate * 1e-6) + 1e-6;
      const finished = this.flows.filter(through);
      this.flows = this.flows.filter((f) => !through(f));
      for (const f of finished) f.done();
      this.touch();
    });
  }
}
