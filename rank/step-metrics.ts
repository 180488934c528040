// What a rank reports of a step: its times, its bytes, its collectives and units on the run's common clock.
import { addTraffic, zeroTraffic, type CollectiveRecord } from '../shared/collectives/record.js';
import type { ClockEstimate } from '../shared/accounting/clock.js';
import type { CollectiveBrief, StepMetrics } from '../shared/control/messages.js';
import type { MemoryLedger } from '../shared/tensor/memory-ledger.js';
import type { StepStats } from '../shared/training/schemes/step-probe.js';

/** What is reported of a collective; its entry and exit on the run's common clock. */
function brief(r: CollectiveRecord, clock: ClockEstimate): CollectiveBrief {
  const entry = performance.timeOrigin + r.startMs + clock.offsetMs;
  return {
    kind: r.kind,
    ...(r.ring === 'main' ? {} : { ring: r.ring }),
    label: r.label,
    elements: r.elements,
    padded: r.padded,
    payload: r.sent.payload,
    frame: r.sent.frame,
    ms: r.ms,
    entry,
    exit: entry + r.ms,
  };
}

/** What is reported of a step: its times, its bytes, its collectives and units on the run's common clock. */
export function stepMetrics(t: number, st: StepStats, ledger: MemoryLedger, clock: ClockEstimate): StepMetrics {
  const onClock = (ms: number) => performance.timeOrigin + ms + clock.offsetMs;
  return {
    step: t,
    loss: Number.isNaN(st.loss) ? null : st.loss,
    startAt: onClock(st.startMs),
    stepMs: st.stepMs,
    computeMs: st.computeMs,
    commMs: st.commMs,
    exposedMs: st.exposedMs,
    // Payload and envelopes per collective; the socket count over the whole step (collectives may overlap).
    sent: { ...st.records.reduce((a, r) => addTraffic(a, r.sent), zeroTraffic()), frame: st.sentFrame },
    recv: { ...st.records.reduce((a, r) => addTraffic(a, r.recv), zeroTraffic()), frame: st.recvFrame },
    collectives: st.records.map((r) => brief(r, clock)),
    units: st.units.map((u) => ({ ...u, start: onClock(u.start), end: onClock(u.end) })),
    wire: st.wire,
    bandPeaks: { ...ledger.peakPerBand },
    ...(st.pcie ? { pcie: st.pcie } : {}),
  };
}
