// A run as one Chrome trace-event JSON (loads in Perfetto and chrome://tracing), on the run's common clock:
// a process per rank; a track for its steps with each unit's forward and backward compute nested inside;
// a track for its communication (collectives as async spans, which may overlap when ZeRO-3 prefetches),
// each collective's bytes in its args; counters of the payload bytes it has sent and of its memory per
// ledger band (the step's peak); and a "ring links" process with a counter track per link (the payload Mbit/s
// it achieved in each step, while its frames were arriving).
import type { SchemeName } from '../control/run-config.js';
import type { SchemeSummary } from '../control/messages.js';
import { schemeTitle } from '../training/schemes/table.js';

interface TraceEvent {
  name: string;
  ph: 'X' | 'b' | 'e' | 'C' | 'M';
  ts: number; // µs from the first step of the run
  dur?: number;
  pid: number;
  tid?: number;
  cat?: string;
  id?: string;
  args?: Record<string, unknown>;
}

export interface Trace {
  traceEvents: TraceEvent[];
  displayTimeUnit: 'ms';
}

const STEPS = 1;
const COMM = 2;

export function buildTrace(ranks: { rank: number; hostname: string }[], summaries: Map<SchemeName, SchemeSummary[]>): Trace {
  const all = [...summaries.values()].flat();
  const t0 = Math.min(...all.flatMap((s) => s.steps.map((x) => x.startAt)));
  const us = (ms: number) => Math.round((ms - t0) * 1000);
  const events: TraceEvent[] = [];
  for (const r of ranks) {
    const pid = r.rank + 1;
    events.push({ name: 'process_name', ph: 'M', ts: 0, pid, args: { name: `rank ${r.rank} (${r.hostname})` } });
    events.push({ name: 'process_sort_index', ph: 'M', ts: 0, pid, args: { sort_index: r.rank } });
    events.push({ name: 'thread_name', ph: 'M', ts: 0, pid, tid: STEPS, args: { name: 'steps' } });
    events.push({ name: 'thread_name', ph: 'M', ts: 0, pid, tid: COMM, args: { name: 'communication' } });
  }
  const links = ranks.length + 1; // the ring links' process, after the ranks'
  events.push({ name: 'process_name', ph: 'M', ts: 0, pid: links, args: { name: 'ring links (Mbit/s achieved per step)' } });
  events.push({ name: 'process_sort_index', ph: 'M', ts: 0, pid: links, args: { sort_index: ranks.length } });
  for (const [scheme, sums] of summaries) {
    for (const s of sums) {
      const pid = s.rank + 1;
      let sent = 0;
      for (const step of s.steps) {
        events.push({
          name: `${schemeTitle(scheme)} step ${step.step}`,
          ph: 'X',
          ts: us(step.startAt),
          dur: Math.round(step.stepMs * 1000),
          pid,
          tid: STEPS,
          cat: 'step',
          args: { loss: step.loss, computeMs: step.computeMs, exposedMs: step.exposedMs },
        });
        step.collectives.forEach((c, i) => {
          const id = `${scheme}.${step.step}.${i}`;
          const common = { name: `${c.kind} ${c.label}`.trim(), pid, tid: COMM, cat: 'comm', id };
          events.push({ ...common, ph: 'b', ts: us(c.entry), args: { payloadBytes: c.payload, frameBytes: c.frame, elements: c.elements } });
          events.push({ ...common, ph: 'e', ts: us(c.exit) });
        });
        for (const u of step.units)
          events.push({
            name: u.pass === 'optimizer' ? 'optimizer' : `${u.pass} u${u.unit}`,
            ph: 'X',
            ts: us(u.start),
            dur: Math.max(0, us(u.end) - us(u.start)),
            pid,
            tid: STEPS,
            cat: 'compute',
          });
        sent += step.sent.payload;
        events.push({ name: 'payload bytes sent', ph: 'C', ts: us(step.startAt + step.stepMs), pid, args: { [scheme]: sent } });
        const bands = Object.fromEntries(Object.entries(step.bandPeaks).filter(([, bytes]) => bytes > 0));
        events.push({ name: 'memory bytes per band (step peak)', ph: 'C', ts: us(step.startAt), pid, args: bands });
        if (step.wire.wireMs > 0 && ranks.length > 1) {
          const from = (s.rank - 1 + ranks.length) % ranks.length;
          const mbit = (step.wire.bytes * 8) / (step.wire.wireMs * 1000);
          events.push({ name: `link ${from}→${s.rank}`, ph: 'C', ts: us(step.startAt), pid: links, args: { [scheme]: Math.round(mbit) } });
        }
      }
    }
  }
  return { traceEvents: events, displayTimeUnit: 'ms' };
}
