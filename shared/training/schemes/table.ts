// The seed's table: the four schemes differ in three flags. Two more rows carry what else a scheme can differ
// in: a replica group (HSDP shards within groups of ranks and replicates across them) and ZeRO++'s components,
// and each row says what the scheme needs to run. Planner, report, seating, fit and refusals read this table;
// no one else compares a scheme's name. Plain data, so those can read it without loading the training engine.
import type { RunConfig, SchemeName } from '../../control/run-config.js';
import { DEFAULT_QUANT_BLOCK, type Components } from '../../control/zeropp.js';

export interface SchemeFlags {
  shardOptimizer: boolean; // fp32 master weights, m and v: one slice per rank
  shardGradients: boolean; // a rank keeps only the gradient slice it updates
  shardParameters: boolean; // the 16-bit working copy too: units are gathered for each use
}

export interface SchemeEntry extends SchemeFlags {
  title: string;
  /** Shards over a group of G ranks, replicated across the groups (two sub-rings: the group's and the cross one). */
  replicas: boolean;
  /** ZeRO++'s components (schemes/zeropp/): all three, those asked for (--qwz, --hpz, --qgz), or none. */
  zeropp: 'all' | 'asked' | 'none';
  /** It needs at least 2 groups of at least 2 ranks (by host, or --shard-group). */
  needsGroups: boolean;
  /** Why it cannot checkpoint or resume yet (absent: it can). */
  noCheckpoints?: string;
  /** Why it cannot train with frozen weights yet (--lora, --freeze; absent: it can). */
  noFrozen?: string;
  /** What of DeepSpeed's offload it takes (--offload): nothing (DP is DeepSpeed's stage 0), the optimizer, or
   *  the parameters too (ZeRO-3's offload_param). */
  offload: 'none' | 'optimizer' | 'params';
}

const NOT_QUANTIZED = 'it does not quantize frozen weights yet (--lora, --freeze)';

// prettier-ignore
export const SCHEME_TABLE: Readonly<Record<SchemeName, Readonly<SchemeEntry>>> = {
  dp:     { title: 'DP',     shardOptimizer: false, shardGradients: false, shardParameters: false, replicas: false, zeropp: 'none',  needsGroups: false, offload: 'none' },
  zero1:  { title: 'ZeRO-1', shardOptimizer: true,  shardGradients: false, shardParameters: false, replicas: false, zeropp: 'none',  needsGroups: false, offload: 'optimizer' },
  zero2:  { title: 'ZeRO-2', shardOptimizer: true,  shardGradients: true,  shardParameters: false, replicas: false, zeropp: 'none',  needsGroups: false, offload: 'optimizer' },
  zero3:  { title: 'ZeRO-3', shardOptimizer: true,  shardGradients: true,  shardParameters: true,  replicas: false, zeropp: 'asked', needsGroups: false, offload: 'params', noFrozen: NOT_QUANTIZED },
  // ZeRO-3's flags within a shard group of G ranks; the groups are replicas
  hsdp:   { title: 'HSDP',   shardOptimizer: true,  shardGradients: true,  shardParameters: true,  replicas: true,  zeropp: 'none',  needsGroups: true,  offload: 'params',
            noCheckpoints: 'its checkpoints are not written yet (--checkpoint-every, --resume)' },
  // ZeRO-3's flags; its gathers and reductions change on the wire
  zeropp: { title: 'ZeRO++', shardOptimizer: true,  shardGradients: true,  shardParameters: true,  replicas: false, zeropp: 'all',   needsGroups: true,  offload: 'optimizer', noFrozen: NOT_QUANTIZED },
};

export const schemeTitle = (name: SchemeName): string => SCHEME_TABLE[name].title;

/** A scheme that shards within groups and replicates across them, over two sub-rings. */
export const isHybrid = (name: SchemeName): boolean => SCHEME_TABLE[name].replicas;

/** The scheme that shards nothing: the baseline the report compares every other with. */
export const isReplicated = (name: SchemeName): boolean => {
  const f = SCHEME_TABLE[name];
  return !f.shardOptimizer && !f.shardGradients && !f.shardParameters;
};

/** A scheme that shards the working copy too, and so gathers parameters for every use. */
export const gathersParameters = (name: SchemeName): boolean => SCHEME_TABLE[name].shardParameters;

/** A scheme that takes ZeRO++'s components one by one (--qwz, --hpz, --qgz). */
export const takesComponents = (name: SchemeName): boolean => SCHEME_TABLE[name].zeropp === 'asked';

/** The schemes of a run that take the components one by one, and the one that runs all of them. */
export const componentSchemes = (schemes: readonly SchemeName[]): { asked: SchemeName[]; all: SchemeName[] } => ({
  asked: schemes.filter(takesComponents),
  all: schemes.filter((s) => SCHEME_TABLE[s].zeropp === 'all'),
});

/** Which of ZeRO++'s components a scheme runs with in this run, or undefined for none. */
export function componentsOf(c: Pick<RunConfig, 'zeropp'>, scheme: SchemeName): Components | undefined {
  const block = c.zeropp?.block ?? DEFAULT_QUANT_BLOCK;
  const z = SCHEME_TABLE[scheme].zeropp;
  if (z === 'all') return { qwz: true, hpz: true, qgz: true, block };
  return z === 'asked' && c.zeropp && (c.zeropp.qwz || c.zeropp.hpz || c.zeropp.qgz) ? c.zeropp : undefined;
}

/** The rings beyond the run's one that some scheme of the run needs: the replica groups' two sub-rings, hpZ's
 *  group ring, qgZ's stride rings. */
export function ringsNeeded(c: Pick<RunConfig, 'zeropp' | 'schemes'>): { replicas: boolean; hpz: boolean; qgz: boolean } {
  const all = c.schemes.map((s) => componentsOf(c, s)).filter((x) => x !== undefined);
  return { replicas: c.schemes.some(isHybrid), hpz: all.some((x) => x.hpz), qgz: all.some((x) => x.qgz) };
}

/** Whether the scheme, as a run without components asked for would run it, refuses frozen weights (--lora,
 *  --freeze): the same rule as schemeRefusal's, for a list of schemes made before a run config exists. */
export const frozenRefused = (scheme: SchemeName): boolean => Boolean(SCHEME_TABLE[scheme].noFrozen && componentsOf({ zeropp: undefined }, scheme));

/** Why `scheme` cannot run with this config whatever the world (frozen weights, checkpoints, offload), or null. */
export function schemeRefusal(
  scheme: SchemeName,
  c: Pick<RunConfig, 'adapt' | 'checkpoint' | 'resume' | 'zeropp'> & Partial<Pick<RunConfig, 'offload'>>,
): string | null {
  const e = SCHEME_TABLE[scheme];
  if (e.noCheckpoints && (c.checkpoint || c.resume)) return e.noCheckpoints;
  if (e.noFrozen && c.adapt && componentsOf(c, scheme)) return e.noFrozen;
  if (c.offload && e.offload === 'none') return "it cannot offload: its optimizer state is whole on every rank (DeepSpeed's stage 0 cannot either)";
  if (c.offload?.params && (e.offload !== 'params' || componentsOf(c, scheme)))
    return "it cannot offload parameters: that is ZeRO-3's (DeepSpeed's offload_param), without ZeRO++'s components";
  return null;
}
