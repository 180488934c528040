// Does it fit: each scheme's peak against a memory limit, the hybrid's too once its shard group is known.
import { describe, expect, it } from 'vitest';
import { fitCheck } from '../../../shared/accounting/fit.js';
import { RunPlan } from '../../../shared/accounting/run-plan.js';
import { smallConfig } from '../../helpers/config.js';

describe('fitCheck', () => {
  const config = (shardGroup: number) => smallConfig({ model: '512,1024,512,10', scheme: 'all', batch: 8, wireDtype: 'bf16', shardGroup });

  it('refuses the schemes over the limit and names those that fit, the hybrid among them once grouped', () => {
    const plan = new RunPlan(config(2), 8);
    // at world 8: DP 16, HSDP over groups of 2 8, ZeRO-1 4 + 12/8, ZeRO-2 2 + 14/8, ZeRO-3 16/8 bytes per parameter
    const fits = fitCheck(plan, plan.memory('hsdp').peak + 1);
    expect(fits.refused).toEqual(['dp']);
    expect(fits.fitting).toEqual(['zero1', 'zero2', 'zero3', 'hsdp']);
    const tight = fitCheck(plan, plan.memory('zero1').peak + 1);
    expect(tight.refused).toEqual(expect.arrayContaining(['dp', 'hsdp'])); // (and ZeRO-2, whose peak holds a unit's gradient)
    expect(tight.fitting).toContain('zero3');
    expect(tight.message).toMatch(/does not fit .*HSDP \(/);
  });

  it('leaves the hybrid out while its shard group is still to be resolved from the hosts', () => {
    const fit = fitCheck(new RunPlan(config(0), 8), 1);
    expect(Object.keys(fit.peaks)).toEqual(['dp', 'zero1', 'zero2', 'zero3']);
  });
});
