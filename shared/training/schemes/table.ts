// The seed's table: the four schemes differ in three flags, and in nothing else that a planner, a report or
// a checkpoint needs to know. Plain data, so those can read it without loading the training engine.
import type { SchemeName } from '../../control/run-config.js';

export interface SchemeFlags {
  shardOptimizer: boolean; // fp32 master weights, m and v: one slice per rank
  shardGradients: boolean; // a rank keeps only the gradient slice it updates
  shardParameters: boolean; // the 16-bit working copy too: units are gathered for each use
}

export interface SchemeEntry extends SchemeFlags {
  title: string;
}

// prettier-ignore
export const SCHEME_TABLE: Readonly<Record<SchemeName, Readonly<SchemeEntry>>> = {
  dp:    { title: 'DP',     shardOptimizer: false, shardGradients: false, shardParameters: false },
  zero1: { title: 'ZeRO-1', shardOptimizer: true,  shardGradients: false, shardParameters: false },
  zero2: { title: 'ZeRO-2', shardOptimizer: true,  shardGradients: true,  shardParameters: false },
  zero3: { title: 'ZeRO-3', shardOptimizer: true,  shardGradients: true,  shardParameters: true  },
  // ZeRO-3's flags within a shard group of G ranks; the groups are replicas (see hybridGroups)
  hsdp:  { title: 'HSDP',   shardOptimizer: true,  shardGradients: true,  shardParameters: true  },
  // ZeRO-3's flags; its gathers and reductions change on the wire (schemes/zeropp.ts)
  zeropp: { title: 'ZeRO++', shardOptimizer: true,  shardGradients: true,  shardParameters: true  },
};

/** A scheme that shards within groups and replicates across them, over two sub-rings. */
export const isHybrid = (name: SchemeName): boolean => name === 'hsdp';

export const schemeTitle = (name: SchemeName): string => SCHEME_TABLE[name].title;

/** The scheme that shards nothing: the baseline the report compares every other with. */
export const isReplicated = (name: SchemeName): boolean => {
  const f = SCHEME_TABLE[name];
  return !f.shardOptimizer && !f.shardGradients && !f.shardParameters;
};

/** A scheme that shards the working copy too, and so gathers parameters for every use. */
export const gathersParameters = (name: SchemeName): boolean => SCHEME_TABLE[name].shardParameters;
