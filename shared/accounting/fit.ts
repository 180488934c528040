// "Does it fit": per-rank peak of each scheme against a memory limit, before anything is allocated.
import { SCHEMES, type SchemeName } from '../control/run-config.js';
import { isHybrid, schemeTitle } from '../training/schemes/table.js';
import type { RunPlan } from './run-plan.js';
import { formatBytes } from './units.js';

export interface FitResult {
  peaks: Record<string, number>; // scheme -> theoretical peak bytes per rank
  refused: SchemeName[];
  fitting: SchemeName[];
  message: string;
}

export function fitCheck(plan: RunPlan, limitBytes: number): FitResult {
  const { config, spec, world } = plan;
  const peaks: Record<string, number> = {};
  const refused: SchemeName[] = [];
  const fitting: SchemeName[] = [];
  // The hybrid once its shard group is known (the coordinator resolves it from the hosts before it assigns).
  const hybrid = config.shardGroup > 0 ? config.schemes.filter(isHybrid) : [];
  for (const s of [...SCHEMES, ...hybrid]) {
    const peak = plan.memory(s).peak;
    peaks[s] = peak;
    if (peak <= limitBytes) fitting.push(s);
    else if (config.schemes.includes(s)) refused.push(s);
  }
  const names = (xs: SchemeName[]) => xs.map((x) => `${schemeTitle(x)} (${formatBytes(peaks[x])})`).join(', ');
  const message = refused.length
    ? `model of ${spec.params} parameters on ${world} ranks does not fit in ${formatBytes(limitBytes)} per rank: ${names(refused)} at peak. ${fitting.length ? `Schemes that fit: ${names(fitting)}.` : 'No scheme fits.'}`
    : `every requested scheme fits in ${formatBytes(limitBytes)} per rank`;
  return { peaks, refused, fitting, message };
}

/** The run's schemes under a --max-rank-memory limit: those not over it (`kept`; the rest are left out, said
 *  in `note`), and whether any of the run's schemes is known to fit (none: the run is refused). */
export function schemesUnder(plan: RunPlan, limitBytes: number): { fit: FitResult; kept: SchemeName[]; anyFits: boolean; note: string | null } {
  const fit = fitCheck(plan, limitBytes);
  const kept = plan.config.schemes.filter((s) => !fit.refused.includes(s));
  const note = fit.refused.length ? `--max-rank-memory ${formatBytes(limitBytes)}: left out ${fit.refused.map(schemeTitle).join(', ')} (${fit.message})` : null;
  return { fit, kept, anyFits: kept.some((s) => fit.fitting.includes(s)), note };
}

/** Runtime a rank holds besides what the plan counts: Node, the links' receive pool, the data (measured ~65 MiB
 *  at the default sizes). */
const RANK_RUNTIME_BYTES = 64 * 2 ** 20;

export interface HostNeed {
  scheme: SchemeName;
  rankBytes: number; // one rank: its heap (model states and each step's transients), the seed's initial parameters, activations, runtime
  hostBytes: number; // `ranksOnHost` of them
}

/** What each of the run's schemes needs of one host's memory when `ranksOnHost` of its ranks compute there. */
export function hostNeeds(plan: RunPlan, ranksOnHost: number): HostNeed[] {
  const { config, spec, world } = plan;
  const activations = spec.activationBytes(config.batch / (world * config.accumulate), config.recompute);
  const schemes = config.schemes.filter((s) => !isHybrid(s) || config.shardGroup > 0);
  return schemes
    .map((scheme) => {
      const rankBytes = plan.heapBytes(scheme) + 4 * spec.params + activations + RANK_RUNTIME_BYTES;
      return { scheme, rankBytes, hostBytes: rankBytes * ranksOnHost };
    })
    .sort((a, b) => b.rankBytes - a.rankBytes);
}
