// Virtual time for `zerowire simulate`: every rank of the run is a set of promises in this one process, and
// time moves only when all of them wait. Then the earliest wake-up is due: the clock jumps to it and wakes
// everything due at that moment at once (ranks of one schedule wake together). A wait with nothing due is a
// deadlock of the schedule itself (a collective some rank never enters), reported as such, not hung on.
import type { Clock } from '../shared/time/clock.js';

interface Wake {
  at: number;
  seq: number; // wake-ups due at one moment run in the order they were asked for
  resolve: () => void;
}

/** A binary heap of wake-ups by (at, seq). */
class WakeHeap {
  private readonly items: Wake[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Wake | undefined {
    return this.items[0];
  }

  push(w: Wake): void {
    const a = this.items;
    a.push(w);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): Wake | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let m = i;
        if (l < a.length && before(a[l], a[m])) m = l;
        if (r < a.length && before(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}

const before = (x: Wake, y: Wake) => x.at < y.at || (x.at === y.at && x.seq < y.seq);

/** Microtasks drained: a macrotask runs only once none is left. */
const quiescent = () => new Promise<void>((r) => setImmediate(r));

export class VirtualClock implements Clock {
  private t = 0;
  private seq = 0;
  private readonly wakes = new WakeHeap();
  /** Wake-ups handled, for the simulation's own figures. */
  events = 0;

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.wakes.push({ at: this.t + Math.max(0, ms), seq: this.seq++, resolve }));
  }

  turn(): Promise<void> {
    return this.sleep(0);
  }

  /** Drive the clock until `done` settles; its value, or its error. `stuck` names who waits when nothing is due. */
  async drive<T>(done: Promise<T>, stuck: () => string): Promise<T> {
    let settled = false;
    const watched = done.finally(() => (settled = true));
    watched.catch(() => undefined);
    for (;;) {
      await quiescent();
      if (settled) return watched;
      const first = this.wakes.peek();
      if (!first) throw new Error(`simulation stalled at ${this.t.toFixed(3)} ms: every rank waits and nothing is due (${stuck()})`);
      this.t = first.at;
      // everything due now wakes in this turn
      while (this.wakes.size && this.wakes.peek()!.at === this.t) {
        this.wakes.pop()!.resolve();
        this.events++;
      }
    }
  }
}
