// The agreement between schemes: exact where they sum alike (a 1-ulp change is caught), a stated bound where
// the order or the precision differs, the final loss where ZeRO++ quantizes.
import { describe, expect, it } from 'vitest';
import { agreementOf, agreementText } from '../../../shared/accounting/agreement.js';
import type { SchemeName } from '../../../shared/control/run-config.js';

const losses = [2.3, 2.1, 1.9, 1.7];
const row = (scheme: SchemeName, title: string, ls = losses, paramDiff = 0) => ({
  scheme,
  title,
  losses: [...ls],
  finalLoss: ls[ls.length - 1],
  maxParamDiff: paramDiff,
});
const fp32 = { accumulate: 1, wireDtype: 'fp32' as const };
const bf16 = { accumulate: 1, wireDtype: 'bf16' as const };

/** The next fp32 value above x: one unit in the last place. */
function ulpUp(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0] += 1;
  return f[0];
}

describe('agreement between schemes', () => {
  it('DP and ZeRO-1/2/3 must agree exactly, and say so', () => {
    const a = agreementOf([row('dp', 'DP'), row('zero1', 'ZeRO-1'), row('zero2', 'ZeRO-2'), row('zero3', 'ZeRO-3')], bf16);
    expect(a.pairs.map((p) => [p.kind, p.bound, p.agree])).toEqual([
      ['exact', 0, true],
      ['exact', 0, true],
      ['exact', 0, true],
    ]);
    expect(agreementText(a)).toBe(
      'losses agree across schemes: yes: ZeRO-1, ZeRO-2, ZeRO-3 equal DP exactly (losses and final parameters to the bit: the same sums in the same order)',
    );
  });

  it('a 1-ulp change in one loss, or in one final parameter, of a scheme that must be exact is caught', () => {
    const nudged = losses.map((x, t) => (t === 2 ? ulpUp(Math.fround(x)) : Math.fround(x)));
    const exact = losses.map((x) => Math.fround(x));
    const byLoss = agreementOf([row('dp', 'DP', exact), row('zero3', 'ZeRO-3', nudged)], bf16);
    expect(byLoss.agree).toBe(false);
    expect(byLoss.pairs[0].lossDiff).toBeGreaterThan(0);
    expect(byLoss.pairs[0].lossDiff).toBeLessThan(2e-7);
    const byParam = agreementOf([row('dp', 'DP', exact), row('zero2', 'ZeRO-2', exact, ulpUp(0.5) - 0.5)], bf16);
    expect(byParam.agree).toBe(false);
    expect(agreementText(byParam)).toMatch(/^losses agree across schemes: NO: ZeRO-2 differs from DP .* where it must equal it exactly/);
  });

  it('HSDP sums within a host first: bounded by the wire precision, the bound and the reason printed', () => {
    const off = losses.map((x) => x + 3e-6);
    const a = agreementOf([row('dp', 'DP'), row('hsdp', 'HSDP', off, 1e-6)], fp32);
    expect(a.pairs[0]).toMatchObject({ kind: 'order', bound: 1e-5, agree: true });
    expect(agreementText(a)).toMatch(/HSDP within 3\.00e-6 of DP \(bound 0\.00001: HSDP sums within a host first: another summation order, fp32's rounding/);
    /** DP against an HSDP whose every loss is `d` off. */
    const hsdpOff = (d: number, wire: typeof fp32 | typeof bf16) =>
      agreementOf(
        [
          row('dp', 'DP'),
          row(
            'hsdp',
            'HSDP',
            losses.map((x) => x + d),
          ),
        ],
        wire,
      );
    expect(hsdpOff(3e-5, fp32).agree).toBe(false);
    expect(hsdpOff(3e-3, bf16).pairs[0]).toMatchObject({ bound: 2e-2, agree: true });
  });

  it('with accumulation, ZeRO-2/3 reduce every micro-batch: bounded against DP; ZeRO-1 still exact', () => {
    const acc = { accumulate: 2, wireDtype: 'fp32' as const };
    expect(agreementText(agreementOf([row('dp', 'DP'), row('zero3', 'ZeRO-3')], acc))).toMatch(
      /^losses agree across schemes: yes: ZeRO-3 within 0\.00e\+0 of DP/,
    );
    expect(agreementText(agreementOf([row('dp', 'DP'), row('zero3', 'ZeRO-3')], bf16))).toMatch(/^losses agree across schemes: yes: ZeRO-3 equals DP exactly/);
    const a = agreementOf([row('dp', 'DP'), row('zero1', 'ZeRO-1'), row('zero3', 'ZeRO-3', losses, 2e-7)], acc);
    expect(a.pairs.map((p) => p.kind)).toEqual(['exact', 'order']);
    expect(a.pairs[1].why).toMatch(/one reduces every micro-batch, the other their sum/);
  });

  it("ZeRO++ is held to its reference's final loss, not to exactness", () => {
    const zpp = [2.3, 2.5, 2.0, 1.74]; // 0.2 apart at step 1, 2.4% at the end
    const a = agreementOf([row('zero3', 'ZeRO-3'), row('zeropp', 'ZeRO++', zpp)], bf16);
    expect(a.pairs[0]).toMatchObject({ kind: 'lossy', bound: 0.05, agree: true });
    expect(agreementText(a)).toMatch(
      /^losses agree across schemes: yes: ZeRO\+\+'s final loss 2\.35% from ZeRO-3's \(bound 5%: int8 weight gathers and int4 gradients: lossy by design/,
    );
    expect(agreementOf([row('zero3', 'ZeRO-3'), row('zeropp', 'ZeRO++', [2.3, 2.2, 2.0, 1.9])], bf16).agree).toBe(false);
    // ZeRO-3 with hpZ alone gathers the same values from a host's copy: exact.
    const hpz = agreementOf([row('dp', 'DP'), row('zero3', 'ZeRO-3 (hpZ)')], { ...bf16, zeropp: { qwz: false, hpz: true, qgz: false, block: 256 } });
    expect(hpz.pairs[0].kind).toBe('exact');
  });

  it('a NaN loss agrees with nothing', () => {
    expect(agreementOf([row('dp', 'DP'), row('zero3', 'ZeRO-3', [2.3, Number.NaN, 1.9, 1.7])], bf16).agree).toBe(false);
  });
});
