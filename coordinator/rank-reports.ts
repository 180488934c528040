// Counting per-rank reports of the same event (a step, a checkpoint) until every rank has sent one.

export class RankReports {
  private readonly counts = new Map<string, number>();

  /** Count one report of `key`; returns how many ranks have now reported it. Forgets the key at `world`. */
  add(key: string, world: number): number {
    const n = (this.counts.get(key) ?? 0) + 1;
    if (n >= world) this.counts.delete(key);
    else this.counts.set(key, n);
    return n;
  }
}
