// --device PATH end to end: a datasheet's card predicts as the preset with the same figures, a run on it says
// it is modeled from its datasheet, and --device with --compute is refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const A10 = { name: 'A10', memory_gb: 24, bf16_tflops: 125, memory_gbps: 600, pcie_gbps: 25, link: 'pcie', link_gbps: 32, source: 'NVIDIA A10 datasheet' };
const rowsOf = (text: string) => text.split('\n').filter((l) => /^(DP|ZeRO-\d)\s/.test(l));

describe('--device PATH', () => {
  it('plans as the preset of the same figures, and a run on it says its model is not calibrated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-device-'));
    try {
      const file = join(dir, 'a10.json');
      writeFileSync(file, JSON.stringify(A10));
      const plan = ['plan', '--model', 'llama2-7b', '--world', '16', '--gbit', '10'];
      const [byFile, byPreset] = await Promise.all([runCli([...plan, '--device', file], 30_000), runCli([...plan, '--compute', 'model:a10'], 30_000)]);
      expect(byFile.code, byFile.stderr).toBe(0);
      expect(rowsOf(byFile.stdout)).toEqual(rowsOf(byPreset.stdout));
      expect(rowsOf(byFile.stdout)).toHaveLength(4);
      expect(byFile.stdout).toMatch(/on 16 A10 \(from its datasheet, .*a10\.json\) \(modeled from its datasheet, not calibrated on it;/);
      const run = await runCli(
        ['local', '--world', '2', '--device', file, '--model', 'llama:2,64,4,2,172,32', '--steps', '2', '--batch', '2', '--preflight', 'off'],
        60_000,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        /what-if: compute modeled on A10 \(from its datasheet.*\(125 TFLOPS dense bf16, 24 GB; NVIDIA A10 datasheet\); modeled from its datasheet with the H200's fitted efficiencies, not calibrated on this card/,
      );
      const both = await runCli(['local', '--device', file, '--compute', 'inline'], 30_000);
      expect(both.code).toBe(2);
      expect(both.stderr.trim()).toBe('zerowire: --device and --compute inline: --device models compute on its card; give one of them');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
