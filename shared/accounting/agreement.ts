// Whether the schemes of a run computed what they should, each against the first (the reference), with the
// bound that pair earns from what differs between them. Schemes that sum the same values in the same order
// (DP and ZeRO-1/2/3 reduce each unit over the same ring, chunk for chunk) must agree to the bit, losses and
// final weights alike: any difference there is a bug, however small. Where the order differs (HSDP sums
// within a host first; ZeRO-2/3 reduce every micro-batch where DP and ZeRO-1 reduce the accumulated sum)
// rounding differs, by fp32's or the bf16 wire's precision. ZeRO++'s int8 weights and int4 gradients are lossy
// by design: its training is held to its reference's final loss, as its convergence test holds it.
import type { RunConfig, SchemeName } from '../control/run-config.js';
import { componentsOf, isHybrid, SCHEME_TABLE } from '../training/schemes/table.js';

type AgreementKind = 'exact' | 'order' | 'lossy';

/** One scheme against the reference. */
interface PairAgreement {
  title: string;
  kind: AgreementKind;
  bound: number; // exact: 0 (loss and parameters); order: max |loss difference|; lossy: |final loss / reference's - 1|
  why: string; // what differs between the two, and so why this bound
  lossDiff: number; // max over steps of |loss - reference's loss|
  finalShare: number; // |final loss / reference's final loss - 1|
  paramDiff: number; // max |final parameter - reference's|
  agree: boolean;
}

export interface Agreement {
  reference: string; // the first scheme's title
  pairs: PairAgreement[];
  agree: boolean;
  maxLossDiff: number;
  maxParamDiff: number;
}

/** Order-bound pairs on an fp32 wire: rounding of fp32 sums in another order, a few ulps a step. */
const FP32_ORDER_BOUND = 1e-5;
/** ... on a bf16 wire: partial sums rounded to 8 bits of mantissa at different places. */
const BF16_ORDER_BOUND = 2e-2;
/** ZeRO++ against its reference: the final loss within 5%. Its 80-step convergence test holds 3% (seeds 0-2
 *  ended +1.8%, -0.8%, +3.2%); the README's 20-step example ends 3.7% apart (ZeRO++ the lower), early steps
 *  of a quantized run wandering further than its end. */
const LOSSY_FINAL_SHARE = 0.05;

interface Arithmetic {
  order: string; // two schemes with the same order sum the same values in the same order
  lossy: string | null; // what quantizes, if anything
}

function arithmeticOf(scheme: SchemeName, c: Pick<RunConfig, 'accumulate' | 'zeropp'>): Arithmetic {
  const z = componentsOf(c, scheme);
  const lossy = z && (z.qwz || z.qgz) ? [z.qwz && 'int8 weight gathers', z.qgz && 'int4 gradients'].filter(Boolean).join(' and ') : null;
  // With accumulation, DP and ZeRO-1 reduce the micro-batches' sum once; the sharded-gradient schemes reduce
  // each micro-batch and add the reduced shards.
  const perMicroBatch = c.accumulate > 1 && SCHEME_TABLE[scheme].shardGradients;
  const order = `${isHybrid(scheme) ? 'host-first' : 'ring'}${perMicroBatch ? ', per micro-batch' : ''}`;
  return { order, lossy };
}

function whyOrder(a: Arithmetic, b: Arithmetic, c: Pick<RunConfig, 'wireDtype'>): string {
  const what =
    a.order.startsWith('host-first') !== b.order.startsWith('host-first')
      ? 'HSDP sums within a host first'
      : 'one reduces every micro-batch, the other their sum';
  return `${what}: another summation order, ${c.wireDtype === 'fp32' ? "fp32's rounding" : "the bf16 wire's rounding"}`;
}

const maxAbsDiff = (a: readonly number[], b: readonly number[]) => a.reduce((m, x, t) => Math.max(m, Math.abs(x - (b[t] ?? Number.NaN))), 0);

/** Each scheme after the first against the first. Rows carry their losses, final loss and parameter
 *  difference from the first scheme's final parameters. */
export function agreementOf(
  rows: readonly { scheme: SchemeName; title: string; losses: number[]; finalLoss: number; maxParamDiff: number }[],
  config: Pick<RunConfig, 'accumulate' | 'zeropp' | 'wireDtype'>,
): Agreement {
  const ref = rows[0];
  const pairs: PairAgreement[] = [];
  for (const row of rows.slice(1)) {
    const a = arithmeticOf(ref.scheme, config);
    const b = arithmeticOf(row.scheme, config);
    const lossDiff = maxAbsDiff(row.losses, ref.losses);
    const finalShare = Math.abs(row.finalLoss / ref.finalLoss - 1);
    const paramDiff = row.maxParamDiff;
    const base = { title: row.title, lossDiff, finalShare, paramDiff };
    // NaN never agrees: a diverged or missing loss fails every bound.
    if (a.lossy || b.lossy) {
      const why = `${[a.lossy, b.lossy].filter(Boolean).join('; ')}: lossy by design, held to the final loss`;
      pairs.push({ ...base, kind: 'lossy', bound: LOSSY_FINAL_SHARE, why, agree: finalShare <= LOSSY_FINAL_SHARE });
    } else if (a.order !== b.order) {
      const bound = config.wireDtype === 'fp32' ? FP32_ORDER_BOUND : BF16_ORDER_BOUND;
      pairs.push({ ...base, kind: 'order', bound, why: whyOrder(a, b, config), agree: lossDiff <= bound });
    } else {
      pairs.push({ ...base, kind: 'exact', bound: 0, why: 'the same sums in the same order', agree: lossDiff === 0 && paramDiff === 0 });
    }
  }
  return {
    reference: ref?.title ?? '',
    pairs,
    agree: pairs.every((p) => p.agree),
    maxLossDiff: Math.max(0, ...pairs.map((p) => p.lossDiff)),
    maxParamDiff: Math.max(0, ...pairs.map((p) => p.paramDiff)),
  };
}

const e = (x: number) => x.toExponential(2);

/** The report's line: exact pairs together, each bounded pair with its bound, its figure and why. */
export function agreementText(a: Agreement): string {
  if (!a.pairs.length) return `losses: one scheme (${a.reference}), nothing to compare`;
  const by = (kind: PairAgreement['kind']) => a.pairs.filter((p) => p.kind === kind);
  const exact = by('exact');
  const parts: string[] = [];
  if (exact.length) {
    const bad = exact.filter((p) => !p.agree);
    const good = exact.filter((p) => p.agree);
    const equal = (ps: PairAgreement[]) => `${ps.map((p) => p.title).join(', ')} ${ps.length === 1 ? 'equals' : 'equal'} ${a.reference} exactly`;
    for (const p of bad)
      parts.push(
        `${p.title} differs from ${a.reference} (max |loss difference| ${e(p.lossDiff)}, |parameter difference| ${e(p.paramDiff)}) where it must equal it exactly (the same sums in the same order)`,
      );
    if (good.length) parts.push(bad.length ? equal(good) : `${equal(good)} (losses and final parameters to the bit: the same sums in the same order)`);
  }
  for (const p of by('order'))
    parts.push(`${p.title} within ${e(p.lossDiff)} of ${a.reference} (bound ${p.bound}: ${p.why}; max |parameter difference| ${e(p.paramDiff)})`);
  for (const p of by('lossy'))
    parts.push(
      `${p.title}'s final loss ${(100 * p.finalShare).toFixed(2)}% from ${a.reference}'s (bound ${100 * p.bound}%: ${p.why}; max |loss difference| ${e(p.lossDiff)})`,
    );
  return `losses agree across schemes: ${a.agree ? 'yes' : 'NO'}: ${parts.join('; ')}`;
}
