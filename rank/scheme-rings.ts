// The rings a scheme trains on, read from the scheme table: the run's ring, the replica groups' two sub-rings
// (HSDP), and ZeRO++'s host and stride rings for the components that need them.
import type { Collectives } from '../shared/collectives/collectives.js';
import type { SchemeName } from '../shared/control/run-config.js';
import type { Components } from '../shared/control/zeropp.js';
import type { RunPlan } from '../shared/accounting/run-plan.js';
import { componentsOf, isHybrid } from '../shared/training/schemes/table.js';
import type { HybridRings } from './hybrid-rings.js';

/** What of a scheme's run the choice of rings reads. */
interface RingsOfRun {
  scheme: SchemeName;
  plan: RunPlan;
  coll: Collectives;
  hybrid?: HybridRings;
}

/** The rings a scheme trains on: the run's ring (and ZeRO-3 with hpZ the host's group ring), or the hybrid's
 *  group ring and cross ring. */
export function trainingRings(run: RingsOfRun): { coll: Collectives; cross?: Collectives; host?: Collectives; strides?: HybridRings['strides'] } {
  const z = componentsOf(run.plan.config, run.scheme);
  if (!isHybrid(run.scheme) && !z?.hpz && !z?.qgz) return { coll: run.coll };
  const h = run.hybrid;
  if (!h) throw new Error(`${run.scheme} runs without its sub-rings`);
  if (z) return { coll: run.coll, ...(z.hpz ? { host: h.group! } : {}), ...(z.qgz ? { strides: h.strides } : {}) };
  return { coll: h.group!, cross: h.cross! };
}

/** What this rank's links encrypt with (they are all alike: TLS on every rank, or on none). */
export function linkCipher(colls: Collectives[]): { link?: { protocol: string; cipher: string } } {
  const link = colls.flatMap(({ ring }) => [ring.prev, ring.next]).find((l) => l?.cipher)?.cipher;
  return link ? { link } : {};
}

/** Every ring this rank has: their staging goes to the scheme's ledger, their sockets to its byte totals. */
export function allRings(run: RingsOfRun): Collectives[] {
  const h = run.hybrid;
  if (!h) return [run.coll];
  return [run.coll, h.group, h.cross, ...(h.strides?.group ?? []), ...(h.strides?.cross ?? [])].filter((c): c is Collectives => c !== null);
}

/** ZeRO++'s components and their rings, where the scheme has them. */
export function zeroPPContext(zeropp: Components | undefined, host?: Collectives, strides?: HybridRings['strides']) {
  return zeropp ? { zeropp, ...(host ? { host } : {}), ...(strides ? { strides } : {}) } : {};
}
