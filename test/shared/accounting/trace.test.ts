// --trace: the run as a Chrome trace that Perfetto opens: every rank a process, every collective an async
// span that opens and closes, inside the step it belongs to, with its bytes; every unit's forward and
// backward nested in its step; counters of bytes sent and memory per band.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Trace } from '../../../shared/accounting/trace.js';
import { runCli } from '../../helpers/cli.js';

describe('--trace', () => {
  it('every rank, every collective and unit inside its step, spans that close, bytes in args, memory counters, and small', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-trace-'));
    try {
      const file = join(dir, 'trace.json');
      const r = await runCli(
        ['local', '--world', '3', '--scheme', 'dp,zero3', '--model', '16,64,64,4', '--batch', '12', '--samples', '48', '--steps', '4', '--trace', file],
        60_000,
      );
      expect(r.code).toBe(0);
      const text = readFileSync(file, 'utf8');
      expect(text.length).toBeLessThan(10 << 20);
      const { traceEvents: events } = JSON.parse(text) as Trace;
      const names = events.filter((e) => e.name === 'process_name').map((e) => e.args!.name);
      expect(names).toEqual([
        expect.stringMatching(/^rank 0 /),
        expect.stringMatching(/^rank 1 /),
        expect.stringMatching(/^rank 2 /),
        'ring links (Mbit/s achieved per step)',
      ]);
      // A counter track per ring link (r-1 -> r), a value per step and scheme.
      const links = new Set(events.filter((e) => e.ph === 'C' && e.name.startsWith('link ')).map((e) => e.name));
      expect([...links].sort()).toEqual(['link 0→1', 'link 1→2', 'link 2→0']);
      const steps = events.filter((e) => e.ph === 'X' && e.cat === 'step');
      expect(steps).toHaveLength(3 * 2 * 4);
      // Three layers, three units: a forward and a backward span each, and the optimizer, per step, inside it.
      const units = events.filter((e) => e.ph === 'X' && e.cat === 'compute');
      expect(units).toHaveLength(3 * 2 * 4 * (3 * 2 + 1));
      for (const step of steps) {
        const inside = units.filter((u) => u.pid === step.pid && u.ts >= step.ts - 1 && u.ts + u.dur! <= step.ts + step.dur! + 1);
        expect(inside.map((u) => u.name).sort(), `units inside ${step.name} of process ${step.pid}`).toEqual([
          'backward u0',
          'backward u1',
          'backward u2',
          'forward u0',
          'forward u1',
          'forward u2',
          'optimizer',
        ]);
      }
      const memory = events.filter((e) => e.ph === 'C' && e.name.startsWith('memory'));
      expect(memory).toHaveLength(3 * 2 * 4);
      for (const m of memory) expect(Object.keys(m.args!)).toEqual(expect.arrayContaining(['params16', 'master', 'm', 'v', 'compute']));
      const begins = events.filter((e) => e.ph === 'b');
      expect(begins.length).toBeGreaterThan(0);
      for (const b of begins) {
        const end = events.find((e) => e.ph === 'e' && e.id === b.id && e.pid === b.pid);
        expect(end, `span ${b.id} of process ${b.pid} closes`).toBeDefined();
        expect(end!.ts).toBeGreaterThanOrEqual(b.ts);
        expect(b.args!.payloadBytes).toBeGreaterThan(0);
        const [scheme, step] = String(b.id).split('.');
        const title = scheme === 'dp' ? 'DP' : 'ZeRO-3';
        const parent = steps.find((x) => x.pid === b.pid && x.name === `${title} step ${step}`)!;
        expect(b.ts, `${b.name} starts inside ${parent.name}`).toBeGreaterThanOrEqual(parent.ts - 1);
        expect(end!.ts, `${b.name} ends inside ${parent.name}`).toBeLessThanOrEqual(parent.ts + parent.dur! + 1);
      }
      // ZeRO-3 gathers twice per unit: its spans outnumber DP's.
      const count = (s: string) => begins.filter((b) => String(b.id).startsWith(`${s}.`)).length;
      expect(count('zero3')).toBeGreaterThan(count('dp'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
