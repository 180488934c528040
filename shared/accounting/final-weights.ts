// A scheme's final weights: which rank sends which part (its masters, and a fine-tuning run's frozen copy as the
// rank held it) and the model put back together from them, in the model's order.
import type { SchemeSummary } from '../control/messages.js';
import type { SchemeName } from '../control/run-config.js';
import { SCHEME_TABLE } from '../training/schemes/table.js';
import type { RunPlan } from './run-plan.js';

/** The bytes of fp32 final weights rank `rank` sends the coordinator: the ones finalParameters puts
 *  together. Sharded: the first group's shards make the model (the hybrid's other groups hold replicas of
 *  them). Replicated (DP): rank 0's padded copy. The masters, then (fine-tuning) the frozen parameters' working
 *  copy widened, laid out as the scheme holds it: so the report shows what the ranks really hold of them. None
 *  under modeled compute (no values to compare). */
export function weightBytesFrom(plan: RunPlan, scheme: SchemeName, rank: number): number {
  const { master, frozen } = weightParts(plan, scheme, rank);
  return 4 * (master + frozen);
}

export function weightParts(plan: RunPlan, scheme: SchemeName, rank: number): { master: number; frozen: number } {
  if (plan.modeled) return { master: 0, frozen: 0 };
  const layout = plan.layoutFor(scheme, 0);
  const f = SCHEME_TABLE[scheme];
  const part = (sharded: boolean, shard: number, whole: number) => (sharded ? (rank < layout.world ? shard : 0) : rank === 0 ? whole : 0);
  return {
    master: part(f.shardOptimizer, layout.shardTotal, layout.paddedTotal),
    frozen: part(f.shardParameters, layout.frozenShardTotal, layout.frozenPaddedTotal),
  };
}

/** The full unpadded fp32 parameters a scheme ended with, in the model's order, from the weights the ranks sent
 *  (weightBytesFrom): the trained ones, and the frozen ones as the ranks held them. */
export function finalParameters(plan: RunPlan, scheme: SchemeName, summaries: SchemeSummary[]): Float32Array {
  const layout = plan.layoutFor(scheme, 0);
  const f = SCHEME_TABLE[scheme];
  const f32 = (b: Uint8Array) => new Float32Array(Uint8Array.prototype.slice.call(b).buffer);
  const senders = summaries.filter((s) => weightBytesFrom(plan, scheme, s.rank) > 0);
  const parts = (s: SchemeSummary) => {
    const all = f32(s.master);
    const { master } = weightParts(plan, scheme, s.rank);
    return { master: all.subarray(0, master), frozen: all.subarray(master) };
  };
  const masters = senders.map(parts).filter((p) => p.master.length);
  const trained = f.shardOptimizer ? layout.assemble(masters.map((p) => p.master)) : layout.unpad(masters[0].master);
  if (layout.frozenParams === 0) return trained;
  const frozens = senders.map(parts).filter((p) => p.frozen.length);
  const frozen = f.shardParameters
    ? layout.assemble(
        frozens.map((p) => p.frozen),
        true,
      )
    : layout.unpad(frozens[0].frozen, true);
  return layout.compose(trained, frozen);
}
