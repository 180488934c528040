// Conditions the coordinator waits on (every rank joined, wired, done): each is checked again whenever a
// message arrives, and all of them fail at once when the run fails.
export class Waiters {
  private readonly waiting = new Set<{ check: () => boolean; resolve: () => void; reject: (e: Error) => void }>();

  /** Resolves once `check()` holds; after `timeoutMs`, `onTimeout` runs (it is expected to fail the run). */
  until(check: () => boolean, timeoutMs: number, onTimeout: () => void): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = {
        check,
        resolve: () => (clear(), resolve()),
        reject: (e: Error) => (clear(), reject(e)),
      };
      const timer = Number.isFinite(timeoutMs) ? setTimeout(onTimeout, timeoutMs) : null;
      const clear = () => {
        if (timer) clearTimeout(timer);
        this.waiting.delete(w);
      };
      this.waiting.add(w);
    });
  }

  /** Something changed: resolve whatever now holds. */
  progress(): void {
    for (const w of [...this.waiting]) if (w.check()) w.resolve();
  }

  failAll(err: Error): void {
    for (const w of [...this.waiting]) w.reject(err);
  }
}
