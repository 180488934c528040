// This rank's clock offset from the coordinator's, NTP-style: a few round trips over the control connection,
// the shortest kept (accounting/clock.ts). Replies are handed in by the protocol loop as they arrive.
import type { Logger } from 'pino';
import { estimateOffset, nowMs, type ClockEstimate } from '../shared/accounting/clock.js';
import type { ControlMessage } from '../shared/control/messages.js';

export class ClockSync {
  estimate: ClockEstimate = { offsetMs: 0, uncertaintyMs: Number.POSITIVE_INFINITY };
  private waiting: ((t0: number, t1: number, t2: number) => void) | null = null;

  constructor(
    private readonly send: (m: ControlMessage) => void,
    private readonly log: Logger,
  ) {}

  /** The coordinator's answer to a clock request: its time t1 for our t0. */
  reply(t0: number, t1: number): void {
    this.waiting?.(t0, t1, nowMs());
  }

  async sync(rounds = 8): Promise<void> {
    const samples: { t0: number; t1: number; t2: number }[] = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = nowMs();
      const reply = new Promise<{ t0: number; t1: number; t2: number }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the coordinator did not answer a clock request within 5 s')), 5000);
        this.waiting = (a, t1, t2) => {
          if (a !== t0) return; // an answer to an earlier request that timed out
          clearTimeout(timer);
          resolve({ t0: a, t1, t2 });
        };
      });
      this.send({ type: 'clock', t0 });
      samples.push(await reply);
    }
    this.waiting = null;
    this.estimate = estimateOffset(samples);
    this.log.debug(this.estimate, 'clock offset from the coordinator');
  }
}
