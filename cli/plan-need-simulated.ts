// `plan --need PCT --simulate`: the same question answered by the simulator (simulator/) instead of the closed
// form: each scheme's least link rate between hosts at which exposed communication is at most PCT% of the
// simulated step, with NCCL's algorithms on one NIC of that rate per host. A simulation costs a second or so
// where the closed form costs microseconds, so the search starts at the closed form's answer and walks from
// there (halving or doubling, then bisecting to 2%), beside which it is printed.
import pino from 'pino';
import { textTable } from '../shared/accounting/table.js';
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';
import { schemeTitle } from '../shared/training/schemes/table.js';
import { simulate } from '../simulator/simulate.js';
import type { SchemeNeed } from './plan-need.js';
import { topologyFromOptions } from './simulate-topology.js';

interface Simulated {
  stepMs: number;
  exposedMs: number;
}

const quiet = pino({ level: 'silent' });

/** One scheme's simulated step with hosts joined by one NIC of `gbit`. */
async function simulatedStep(config: RunConfig, scheme: SchemeName, world: number, hosts: number, gbit: number): Promise<Simulated> {
  const t = topologyFromOptions({ hosts, nics: 1, nicGbit: gbit, hopUs: 0, transport: 'nccl' }, config, world); // simulate's own reading
  const sim = await simulate({ ...config, schemes: [scheme], steps: 2 }, t, quiet);
  const row = sim.report.rows[0];
  return { stepMs: row.time.stepMs, exposedMs: row.time.exposedMs };
}

/** The least rate (to 2%) at which the simulated exposed share is at most `share`, searched from `start`. */
async function leastSimulatedRate(at: (gbit: number) => Promise<Simulated>, share: number, start: number): Promise<{ gbit: number; step: Simulated } | null> {
  const holds = async (g: number) => {
    const s = await at(g);
    return s.exposedMs <= share * s.stepMs;
  };
  let [lo, hi] = [start, start];
  if (await holds(start)) {
    for (lo = start / 2; lo > 1e-3 && (await holds(lo)); lo /= 2) hi = lo;
    if (lo <= 1e-3) return { gbit: hi, step: await at(hi) };
  } else {
    for (hi = start * 2; hi < 1e5 && !(await holds(hi)); hi *= 2) lo = hi;
    if (hi >= 1e5) return null;
  }
  while (hi / lo > 1.02) {
    const mid = Math.sqrt(lo * hi);
    if (await holds(mid)) hi = mid;
    else lo = mid;
  }
  return { gbit: hi, step: await at(hi) };
}

const rate = (g: number) => (g >= 100 ? g.toFixed(0) : g >= 10 ? g.toFixed(1) : g.toPrecision(2));

/** The simulated answers beside the closed form's, as a table. */
export async function simulatedNeeds(config: RunConfig, world: number, hosts: number, share: number, needs: SchemeNeed[]): Promise<string> {
  const rows: string[][] = [];
  for (const n of needs) {
    if (n.fitsBytes) continue;
    const closed = n.need && 'gbit' in n.need ? n.need.gbit : null;
    const memo = new Map<number, Promise<Simulated>>();
    const at = (g: number) => memo.get(g) ?? (memo.set(g, simulatedStep(config, n.scheme, world, hosts, g)), memo.get(g)!);
    const found = await leastSimulatedRate(at, share, closed ?? 100);
    rows.push([
      schemeTitle(n.scheme),
      found ? rate(found.gbit) : 'never (up to 100 Tbit/s)',
      found ? found.step.stepMs.toFixed(1) : '',
      found ? found.step.exposedMs.toFixed(1) : '',
      closed === null ? 'never' : rate(closed),
    ]);
  }
  return [
    `simulated (zerowire simulate: every rank's schedule, NCCL's algorithms, one NIC of the rate per host, the GPUs of a host on the device's own link, not --intra-gbit; docs/simulate.md):`,
    textTable([['scheme', `least Gbit/s (exposed ≤ ${(100 * share).toFixed(0)}%)`, 'step ms there', 'exposed ms', 'closed form (above)']], rows),
  ].join('\n');
}
