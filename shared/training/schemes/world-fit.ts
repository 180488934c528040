// Which of a run's schemes can run on the hosts that joined, read from the scheme table: a scheme that needs
// groups gets its group size from the hosts (or --shard-group), and one that cannot run is refused when asked
// for by name, or left out of `all` with the reason.
import { ALL_SCHEMES, type RunConfig } from '../../control/run-config.js';
import { shardGroupSize } from '../../control/shard-groups.js';
import { componentsOf, SCHEME_TABLE, schemeRefusal, schemeTitle, takesComponents } from './table.js';

/** The config the ranks get: the shard group resolved, or the schemes that cannot run left out of `all` (with
 *  the reason). One asked for by name that cannot run throws, and so do hpZ and qgZ on a scheme that takes
 *  them one by one (their host rings span groups of the same size: the host's ranks). */
export function resolveHybrid(config: RunConfig, hostsByRank: readonly string[]): { config: RunConfig; notes: string[] } {
  for (const scheme of config.schemes.filter(takesComponents)) {
    const z = componentsOf(config, scheme);
    if (!z?.hpz && !z?.qgz) continue;
    const [option, what] = z.hpz ? ['--hpz', 'hpZ'] : ['--qgz', 'qgZ'];
    const g = shardGroupSize(config.shardGroup, hostsByRank, what);
    if (!('G' in g)) throw new Error(`${option}: ${g.why}`);
    config = { ...config, shardGroup: g.G };
  }
  const askedByName = !ALL_SCHEMES.every((s) => config.schemes.includes(s));
  const notes: string[] = [];
  for (const scheme of config.schemes.filter((s) => SCHEME_TABLE[s].needsGroups)) {
    const refused = schemeRefusal(scheme, config);
    const g = refused ? { why: refused } : shardGroupSize(config.shardGroup, hostsByRank, schemeTitle(scheme));
    if ('G' in g) {
      config = { ...config, shardGroup: g.G };
      continue;
    }
    if (askedByName) throw new Error(`--scheme ${scheme}: ${g.why}`);
    config = { ...config, schemes: config.schemes.filter((s) => s !== scheme) };
    notes.push(`${schemeTitle(scheme)} left out: ${g.why}`);
  }
  return { config, notes };
}
