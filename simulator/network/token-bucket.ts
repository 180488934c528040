// A shaped link's token bucket (tc tbf, a policer): bytes pass at the link's own pace while the bucket holds
// tokens, at the shaped rate once it is empty, and the bucket refills at that rate up to its burst. The
// namespace LAN's links are shaped this way (deploy/lan/lan.sh: 256 KiB), so after an idle moment a message
// of up to that size leaves at once: what its short exchanges (ZeRO++'s all-to-alls) see.

export interface Bucket {
  rate: number; // bytes per ms, sustained
  burst: number; // bytes
  peak: number; // bytes per ms while tokens last
}

export class TokenBuckets {
  private readonly tokens = new Map<string, number>();

  constructor(private readonly spec: (resource: string) => Bucket | null) {}

  private held(r: string, b: Bucket): number {
    return this.tokens.get(r) ?? b.burst; // full at the start
  }

  /** What `r` carries now: its peak while it holds tokens, its rate once empty; `base` where it has no bucket. */
  capacity(r: string, base: number): number {
    const b = this.spec(r);
    if (!b) return base;
    return this.held(r, b) > 1e-6 * b.burst ? b.peak : b.rate;
  }

  /** `dt` ms at these uses (bytes per ms by resource): each bucket drains above its rate and fills below it. */
  advance(dt: number, use: Map<string, number>): void {
    for (const r of new Set([...use.keys(), ...this.tokens.keys()])) {
      const b = this.spec(r); // an idle link's bucket fills too
      if (b) this.tokens.set(r, Math.min(b.burst, Math.max(0, this.held(r, b) + (b.rate - (use.get(r) ?? 0)) * dt)));
    }
  }

  /** Milliseconds until the first bucket in use above its rate is empty (its capacity changes then). */
  untilEmpty(use: Map<string, number>): number {
    let t = Infinity;
    for (const [r, u] of use) {
      const b = this.spec(r);
      const left = b ? this.held(r, b) : 0;
      if (b && u > b.rate && left > 1e-6 * b.burst) t = Math.min(t, left / (u - b.rate));
    }
    return t;
  }
}
