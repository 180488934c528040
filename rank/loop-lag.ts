// How long a rank's event loop was held up in a step: the longest a 10 ms timer ran late. A host short of
// CPU stalls here whatever it was doing; one waiting on a slow link has its loop free
// (shared/accounting/lateness.ts tells the two apart with it).
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoopLagMeter {
  restart(): void; // a step begins
  fields(): { loopLagMs?: number }; // what the step reports: its longest hold-up (none where not timed)
  stop(): void;
}

/** A meter for each step of a scheme; `timed` false (a simulation: one loop for every rank, on a virtual
 *  clock) times nothing and reports nothing. */
export function loopLagMeter(timed = true): LoopLagMeter {
  if (!timed) return { restart: () => undefined, fields: () => ({}), stop: () => undefined };
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    restart: () => h.reset(),
    fields: () => ({ loopLagMs: h.count > 0 ? h.max / 1e6 : 0 }),
    stop: () => h.disable(),
  };
}
