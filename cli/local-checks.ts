// What `local` knows before it starts a rank: every rank runs on this machine, in its memory. Runs that
// cannot work here are refused now, in one line naming the option, rather than by a rank failing to allocate
// (or the coordinator failing to form groups) after the processes have started.
import { totalmem } from 'node:os';
import { ConfigError, modeledDevice, type RunConfig } from '../shared/control/run-config.js';
import { NAMED_SHAPES } from '../shared/models/named-shapes.js';
import { resolveHybrid } from '../shared/training/schemes/world-fit.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { hostNeeds } from '../shared/accounting/fit.js';
import { formatBytes } from '../shared/accounting/units.js';
import { schemeTitle } from '../shared/training/schemes/table.js';
import { DEVICES } from '../shared/whatif/devices.js';

/** Throws a ConfigError for a run of `world` ranks that cannot run on this machine. */
export function refuseOnThisMachine(config: RunConfig, world: number, modelText: string, memoryBytes = totalmem()): void {
  const { config: resolved } = hybridOnOneHost(config, world);
  if (modeledDevice(resolved)) return; // modeled compute holds no values
  const plan = new RunPlan(resolved, world);
  const needs = hostNeeds(plan, world);
  const refused = needs.filter((n) => n.hostBytes > memoryBytes);
  if (!refused.length) return;
  const fitting = needs.filter((n) => n.hostBytes <= memoryBytes);
  const least = refused[refused.length - 1]; // needs are sorted, the largest first
  const named = NAMED_SHAPES[modelText.trim().toLowerCase()] !== undefined;
  const presets = DEVICES.map((d) => d.name);
  const modeled = `--compute model:${presets[0]} (or ${presets.slice(1).join(', ')}; modeled compute, no values)`;
  const what = named
    ? `a named shape runs as a modeled accelerator: add ${modeled}`
    : fitting.length
      ? `run --scheme ${fitting.map((n) => n.scheme).join(',')}, fewer --world ranks, a smaller --model, or ${modeled}`
      : `fewer --world ranks, a smaller --model, or ${modeled}`;
  const need = fitting.length
    ? `${refused.map((n) => `${schemeTitle(n.scheme)} ${formatBytes(n.rankBytes)}`).join(', ')} per rank`
    : `at least ${formatBytes(least.rankBytes)} per rank (${schemeTitle(least.scheme)})`;
  throw new ConfigError(
    `--model ${modelText}: ${plan.spec.params.toLocaleString('en-US')} parameters need ${need} in model states, activations and runtime; ${world} ranks on this machine need ${formatBytes(least.hostBytes)} and it has ${formatBytes(memoryBytes)}: ${what}`,
  );
}

/** HSDP asked for by name on one host: its groups can only come from --shard-group. */
function hybridOnOneHost(config: RunConfig, world: number): ReturnType<typeof resolveHybrid> {
  try {
    return resolveHybrid(config, Array<string>(world).fill('127.0.0.1'));
  } catch (err) {
    if (config.shardGroup > 0 || config.checkpoint || config.resume) throw new ConfigError((err as Error).message);
    const sizes = Array.from({ length: world }, (_, g) => g).filter((g) => g >= 2 && world % g === 0 && world / g >= 2);
    const z = config.zeropp;
    const message = (err as Error).message;
    const [option, what] = z?.hpz
      ? ['--hpz', 'hpZ']
      : z?.qgz
        ? ['--qgz', 'qgZ']
        : message.startsWith('--scheme zeropp')
          ? ['--scheme zeropp', 'ZeRO++']
          : ['--scheme hsdp', 'HSDP'];
    throw new ConfigError(
      sizes.length
        ? `${option}: local runs every rank on this one host, so grouping by host makes one group: give --shard-group ${sizes.join(' or ')} (ranks per group; ${what} needs at least 2 groups of at least 2)`
        : `${option}: --world ${world} cannot form 2 groups of 2 ranks or more (${what}'s smallest is --world 4 --shard-group 2)`,
    );
  }
}
