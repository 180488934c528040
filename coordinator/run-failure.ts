// How a run fails, once: the first failure stands, every rank is told why, and everything the coordinator
// waits on rejects with it. A rank's own report of a broken link waits a moment for a better verdict.
import { encodeMessage } from '../shared/control/messages.js';
import { CoordinatorError, lostOnTheRing, type Member } from './members.js';
import { Waiters } from './waiters.js';

/** How long a rank's report of a broken link waits for the dead rank's own disconnect to name it. */
const VERDICT_DELAY_MS = 250;

export class RunFailure {
  failure: CoordinatorError | null = null;
  private pending: NodeJS.Timeout | null = null;
  private readonly waiters = new Waiters();

  constructor(
    private readonly members: () => Member[],
    private readonly where: (m: Member) => string,
    private readonly ended: () => boolean, // finished or failed already
    private readonly failed: () => void, // the run's phase becomes 'failed'
  ) {}

  fail(err: CoordinatorError): void {
    if (this.failure || this.ended()) return;
    this.failure = err;
    this.failed();
    for (const m of this.members()) if (m.ws.readyState === m.ws.OPEN) m.ws.send(encodeMessage({ type: 'abort', reason: err.message }));
    this.waiters.failAll(err);
  }

  /** A rank stopping with a reason, or a broken link it reports: the verdict waits a moment, since a rank
   *  whose neighbour died reports the broken link first and the dead rank's own disconnect names the real
   *  culprit. The first such reason stands. */
  failSoon(err: CoordinatorError): void {
    this.pending ??= setTimeout(() => this.fail(this.verdict(err)), VERDICT_DELAY_MS);
  }

  /** Wait until `check()` holds, failing on timeout or on any failure of the run. */
  until(check: () => boolean, timeoutMs: number, why: () => string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return this.waiters.until(check, timeoutMs, () => this.fail(new CoordinatorError(why())));
  }

  /** Something changed: whatever now holds resolves. */
  progress(): void {
    this.waiters.progress();
  }

  stop(): void {
    if (this.pending) clearTimeout(this.pending);
  }

  /** Who failed, from what the ranks said: a rank its ring neighbours lost, or else the first reason. */
  private verdict(first: CoordinatorError): CoordinatorError {
    const ring = lostOnTheRing(this.members());
    return ring ? new CoordinatorError(`${this.where(ring.lost)} went silent on the ring: ${ring.report.message}`) : first;
  }
}
