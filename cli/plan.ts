// `zerowire plan`: model states per rank for each scheme, and whether they fit.
import { ALL_SCHEMES, type SchemeName } from '../shared/control/run-config.js';
import { componentsOf, isHybrid, SCHEME_TABLE, schemeTitle } from '../shared/training/schemes/table.js';
import { textTable } from '../shared/accounting/table.js';
import { bareSizes, crossGroupTraffic, memoryTheory, trafficTheory, type ZeroPPTheory } from '../shared/accounting/theory.js';
import type { WireDtype } from '../shared/tensor/dtype.js';
import type { LayoutSizes } from '../shared/training/layout.js';

export interface PlanRow {
  scheme: SchemeName;
  bytesPerRank: number;
  sentPerStep: number; // payload bytes one rank sends per optimizer step
  fits: boolean | null;
}

/** Every scheme's model states and bytes per rank; with `shardGroup` G (2+ groups of 2+), the hybrid too:
 *  ZeRO-3 over G ranks, and 2(M-1)/M of a shard across the M groups. */
export function plan(
  params: number,
  world: number,
  memory: number | undefined,
  dtype: WireDtype,
  accumulate = 1,
  shardGroup = 0,
  sizesOver: (ranks: number) => LayoutSizes = (ranks) => bareSizes(params, ranks), // a fine-tuned model's: its layout's
): PlanRow[] {
  const schedule = { gatherAhead: 0, reduceBehind: 0, accumulate };
  const row = (scheme: SchemeName, shardOver: number, across: number, zpp?: ZeroPPTheory): PlanRow => {
    const sizes = sizesOver(shardOver);
    const bytesPerRank = memoryTheory(SCHEME_TABLE[scheme], sizes, dtype, schedule, zpp).resident;
    const sentPerStep = trafficTheory(SCHEME_TABLE[scheme], sizes, dtype, accumulate, 1, zpp) + across;
    return { scheme, bytesPerRank, sentPerStep, fits: memory === undefined ? null : bytesPerRank <= memory };
  };
  const groups = shardGroup >= 2 && world % shardGroup === 0 && world / shardGroup >= 2;
  // the table's rows: the schemes that need groups where there are groups; a hybrid shards over its group and
  // sends 2(M-1)/M of a shard across the M groups, ZeRO++ shards over the world with its components on hosts of G
  return ALL_SCHEMES.filter((s) => !SCHEME_TABLE[s].needsGroups || groups).map((s) => {
    if (isHybrid(s)) return row(s, shardGroup, crossGroupTraffic(sizesOver(shardGroup), world / shardGroup, dtype, accumulate));
    const components = componentsOf({ zeropp: undefined }, s);
    return row(s, world, 0, components ? { ...components, G: shardGroup } : undefined);
  });
}

/** Node itself, the links' receive pool (64 MiB), the kernel arena and the data: what a rank holds besides
 *  its model states at the default sizes (the HTML report's "everything a rank holds" shows ~65 MiB of it for a
 *  small model), with room to spare. */
const RUNTIME_BYTES = 256 * 2 ** 20;

/** A Kubernetes resources block for one rank that runs the given schemes one after another: the largest
 *  scheme's model states, a quarter more for the in-step transients (a gathered unit, a bucket), and the
 *  runtime's share. Limits equal requests for memory, so a rank is never the first to be evicted. */
export function k8sResources(rows: PlanRow[], cpu: number, activationBytes = 0): string {
  const worst = Math.max(...rows.map((r) => r.bytesPerRank));
  const mi = Math.ceil((worst * 1.25 + activationBytes + RUNTIME_BYTES) / 2 ** 20);
  return `resources:\n  requests: { cpu: '${cpu}', memory: ${mi}Mi }\n  limits: { memory: ${mi}Mi }`;
}

export interface PlanActivations {
  bytes: number; // per rank
  model: string;
  batch: number; // global
  accumulate: number; // micro-batches per optimizer step
}

export function formatPlan(
  rows: PlanRow[],
  params: number,
  world: number,
  memory: number | undefined,
  dtype: WireDtype,
  act?: PlanActivations,
  accumulate = 1,
): string {
  const gb = (b: number) => (b / 1e9).toFixed(2);
  const head = [['scheme', 'model states GB/rank', 'B/param', ...(memory === undefined ? [] : ['fits']), 'sent GB/rank/step']];
  const body = rows.map((r) => [
    schemeTitle(r.scheme),
    gb(r.bytesPerRank),
    (r.bytesPerRank / params).toFixed(3),
    ...(r.fits === null ? [] : [r.fits ? 'yes' : 'no']),
    gb(r.sentPerStep),
  ]);
  const left =
    memory === undefined
      ? ''
      : `\nleft for activations and buffers in ${gb(memory)} GB: ${rows.map((r) => `${schemeTitle(r.scheme)} ${gb(memory - r.bytesPerRank)} GB`).join(', ')}`;
  const activations = act
    ? `\nactivations per rank (${act.model}, global batch ${act.batch}, ${Math.ceil(act.batch / (world * act.accumulate))} per rank${act.accumulate > 1 ? ` in each of ${act.accumulate} micro-batches` : ''}): ${gb(act.bytes)} GB under every scheme: ZeRO shards the model states, not the activations`
    : '';
  return `${act ? `model ${act.model}: ` : ''}${params.toExponential(3)} parameters on ${world} ranks, mixed-precision Adam (${dtype} params and grads, fp32 master, m, v${accumulate > 1 ? `, and the fp32 gradient sum of ${accumulate} micro-batches` : ''}); GB = 1e9 bytes\n${textTable(head, body)}${left}${activations}\nModel states only${act ? ' in the table' : ''}: ${act ? '' : 'activations, '}the gathered unit of ZeRO-3 and communication buffers come on top. Sent: payload per rank per optimizer step${accumulate > 1 ? ` of ${accumulate} micro-batches (ZeRO-2/3 reduce every micro-batch)` : ''}.`;
}
