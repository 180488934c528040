// How long a rank's event loop was held up in a step: the longest a 10 ms timer ran late. A host short of
// CPU stalls here whatever it was doing; one waiting on a slow link has its loop free
// (shared/accounting/lateness.ts tells the two apart with it).
import { monitorEventLoopDelay } from 'node:perf_hooks';

export function loopLagMeter(): { restart(): void; maxMs(): number; stop(): void } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    restart: () => h.reset(),
    maxMs: () => (h.count > 0 ? h.max / 1e6 : 0),
    stop: () => h.disable(),
  };
}
