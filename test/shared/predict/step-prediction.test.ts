// The predicted step follows the schedule: bytes at the link rate when communication dominates, the sum of
// compute and communication with overlap off, and with overlap on no more than that and no less than either.
import { describe, expect, it } from 'vitest';
import { RunPlan } from '../../../shared/accounting/run-plan.js';
import { predictStep } from '../../../shared/predict/step-prediction.js';
import { SCHEMES } from '../../../shared/control/run-config.js';
import { presetCost } from '../../../shared/whatif/preset.js';
import { smallConfig } from '../../helpers/config.js';

const cost = presetCost('h200');
const plan = (o: Parameters<typeof smallConfig>[0]) =>
  new RunPlan(smallConfig({ model: 'gpt:8,1024,8,1024,32000', compute: 'model:h200', wireDtype: 'bf16', batch: 16, scheme: 'all', ...o }), 4);

describe('predictStep', () => {
  it('on a slow link is the wire time of the theory bytes: ZeRO-3 1.5x DP', () => {
    const p = plan({});
    const link = { gbit: 0.1, latencyUs: 0 };
    const [dp, z3] = ['dp', 'zero3'].map((s) => predictStep(p, s as 'dp', cost, link));
    const wire = (s: 'dp' | 'zero3') => ((p.traffic(s) * 8) / 0.1e9) * 1000;
    expect(dp.commMs / wire('dp')).toBeGreaterThan(1.04); // frames and TCP/IP headers on top
    expect(dp.commMs / wire('dp')).toBeLessThan(1.06);
    expect(z3.commMs / dp.commMs).toBeCloseTo(1.5, 2);
    expect(dp.stepMs).toBeGreaterThan(dp.commMs);
  });

  it('overlap off is compute plus communication; overlap on hides part of it and never beats either', () => {
    const link = { gbit: 25, latencyUs: 20 };
    for (const s of SCHEMES) {
      const off = predictStep(plan({ overlap: 'off' }), s, cost, link);
      const on = predictStep(plan({}), s, cost, link);
      expect(off.stepMs, s).toBeCloseTo(off.computeMs + off.commMs, 6);
      expect(on.stepMs, s).toBeLessThan(off.stepMs);
      expect(on.stepMs, s).toBeGreaterThanOrEqual(Math.max(on.computeMs, on.commMs) - 1e-9);
    }
  });

  it('accumulation: DP reduces once per optimizer step, ZeRO-3 gathers every micro-batch', () => {
    const link = { gbit: 1, latencyUs: 0 };
    const [one, four] = [1, 4].map((k) => plan({ accumulate: k }));
    expect(predictStep(four, 'dp', cost, link).commMs).toBeCloseTo(predictStep(one, 'dp', cost, link).commMs, 6);
    expect(predictStep(four, 'zero3', cost, link).commMs / predictStep(one, 'zero3', cost, link).commMs).toBeCloseTo(4, 6);
  });

  it("a block gathered again after its recompute (DeepSpeed's): on a slow link, its bytes at the link rate on top", () => {
    const link = { gbit: 0.1, latencyUs: 0 };
    const [fsdp, ds] = [false, true].map((r) => plan({ recompute: true, recomputeRegather: r, shardGroup: 2 }));
    for (const s of ['dp', 'zero3', 'hsdp'] as const) {
      const [a, b] = [fsdp, ds].map((p) => predictStep(p, s, cost, link));
      // the wire time of the extra bytes the theory counts (every scheme's frames and headers on top: 1.04-1.06)
      const extra = (((ds.traffic(s) - fsdp.traffic(s)) * 8) / 0.1e9) * 1000;
      if (s === 'dp') expect(extra).toBe(0);
      else expect(extra).toBeGreaterThan(0);
      expect(b.commMs - a.commMs, s).toBeGreaterThanOrEqual(extra * 1.04);
      expect(b.commMs - a.commMs, s).toBeLessThanOrEqual(extra * 1.06 + 1e-9);
    }
    // ZeRO-3's third gather of the 8 blocks: less than a third more (two gathers and a reduce-scatter before;
    // the embeddings and the head are not recomputed), but most of that
    expect(ds.traffic('zero3') / fsdp.traffic('zero3')).toBeGreaterThan(1.15);
    expect(ds.traffic('zero3') / fsdp.traffic('zero3')).toBeLessThan(4 / 3);
  });
});
