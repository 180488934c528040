// The H200 preset against the measured GPU: fitted on the calibration rows (the sweep rows, and the gpt2-xl
// recompute row for the checkpoint's host cost), it must reproduce every other row (real model widths, the 7B
// recompute row, the LM head, Adam) within 15% at >= 10^12 FLOPs and 25% below.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compare,
  fitEfficiencies,
  fitRecomputeHostMs,
  isCalibrationRow,
  isRecomputeCalibrationRow,
  isSweepRow,
  type CalibrationRow,
} from '../../../shared/whatif/calibration.js';
import { H200_FIT, presetCost, runDevice } from '../../../shared/whatif/preset.js';
import { GpuCost } from '../../../shared/whatif/gpu-cost.js';

const rows: CalibrationRow[] = readFileSync(new URL('../../fixtures/gpu/h200.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
const named = rows.filter((r) => ['block', 'head', 'adam'].includes(r.what) && !isCalibrationRow(r));
const label = (r: CalibrationRow) => `${r.what} ${r.name ?? ''}${r.B ? ` B${r.B} T${r.T}` : ''}${r.recompute ? ' recompute' : ''}`;

describe('the H200 preset', () => {
  it('is what a fit on the sweep rows alone gives', () => {
    const sweep = rows.filter(isSweepRow);
    expect(sweep.length).toBeGreaterThanOrEqual(20);
    const start = { gemm: 0.6, memory: 0.6, hostUsPerKernel: 20, gpuUsPerKernel: 2, blend: 3, recomputeHostMs: H200_FIT.recomputeHostMs };
    const fitted = fitEfficiencies(sweep, start);
    console.log('fitted on the sweep rows:', fitted);
    for (const k of ['gemm', 'memory', 'hostUsPerKernel', 'gpuUsPerKernel', 'blend'] as const) expect(fitted[k] / H200_FIT[k], k).toBeCloseTo(1, 1);
  });

  it('has its checkpoint host cost from its own calibration row, which then tests nothing; the 7B recompute row is held out', () => {
    const calibration = rows.filter(isRecomputeCalibrationRow);
    expect(calibration.map(label)).toEqual(['block gpt2-xl B4 T1024 recompute']);
    const fitted = fitRecomputeHostMs(calibration[0], H200_FIT);
    console.log(`recomputeHostMs read off ${label(calibration[0])}: ${fitted.toFixed(3)} ms (preset ${H200_FIT.recomputeHostMs})`);
    expect(Math.abs(fitted - H200_FIT.recomputeHostMs)).toBeLessThan(0.1);
    expect(named.map(label)).not.toContain(label(calibration[0]));
    expect(named.map(label)).toContain('block gpt-7b B1 T4096 recompute');
    console.log(
      `fitted on: ${rows.filter(isCalibrationRow).length} rows (${rows.filter(isSweepRow).length} sweep + ${calibration.length} recompute); tested on: ${named.map(label).join(', ')}`,
    );
  });

  it('predicts every named block, head and Adam row within 15% (>= 1e12 FLOPs) or 25%', () => {
    const cost = presetCost('h200');
    const checked = named.flatMap((r) => compare(cost, r));
    expect(checked.length).toBeGreaterThanOrEqual(25);
    for (const c of checked) {
      const error = c.modeledMs / c.measuredMs - 1;
      console.log(`${c.row.padEnd(34)} measured ${c.measuredMs.toFixed(3)} ms, modeled ${c.modeledMs.toFixed(3)} ms (${(100 * error).toFixed(1)}%)`);
      expect(Math.abs(error), c.row).toBeLessThanOrEqual(c.flops >= 1e12 ? 0.15 : 0.25);
    }
  });

  it('keeps the floor: a tiny block costs its launches, not its FLOPs', () => {
    const cost = presetCost('h200');
    const tiny = compare(cost, { what: 'block', name: 'tiny', D: 64, B: 1, T: 16, step_ms: 1, flops_dense: 1 })[0];
    expect(tiny.modeledMs).toBeGreaterThan(1.4);
    expect(tiny.modeledMs).toBeLessThan(2);
  });

  it('scales other presets by their datasheets, and names the known ones when asked for another', () => {
    const block = rows.find((r) => r.name === 'gpt-7b' && r.B === 4)!;
    const [h200, a100] = ['h200', 'a100'].map((d) => compare(presetCost(d), block)[0].modeledMs);
    expect(a100 / h200).toBeGreaterThan(2.8); // 989 vs 312 TFLOPS, FLOPs-bound
    expect(() => presetCost('tpu9')).toThrow(/h200, h100, a100, l40s, rtx4090, mi300x/);
  });

  it('takes --tflops and --mfu for any device: products at mfu x tflops, the rest of the preset kept', () => {
    const { device, cost } = runDevice({ compute: 'model:h100', tflops: 400, mfu: 0.5 });
    expect(device.peakTflops).toBe(400);
    expect(device.memoryGB).toBe(80);
    expect(device.title).toMatch(/H100 SXM 80GB with a 400 TFLOPS peak and products at 0.5 of it \(given\)/);
    const products = { kernels: 0, flops: 1e15, bytes: 0 };
    expect(cost.gpuMs(products)).toBeCloseTo((1e15 / (400e12 * 0.5)) * 1000, 6);
    expect(cost).toBeInstanceOf(GpuCost);
    expect(runDevice({ compute: 'model:h100' }).cost.gpuMs(products)).toBeCloseTo((1e15 / (989.4e12 * H200_FIT.gemm)) * 1000, 6);
  });
});
