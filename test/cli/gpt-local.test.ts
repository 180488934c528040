// `zerowire local --model gpt:...`: every scheme side by side with the same report as the MLP, the
// activations per rank shown (the same in every scheme), and a dump with the tokens and the batches.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../shared/accounting/report.js';
import { parseSafetensors } from '../../shared/io/safetensors.js';
import { GptSpec } from '../../shared/models/gpt/spec.js';
import { runCli } from '../helpers/cli.js';

describe('local --model gpt', () => {
  it('runs all four schemes on 3 processes: one report, ZeRO-3 at 1.5x DP on the wire, activations per rank the same in every scheme', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-gpt-'));
    try {
      const out = join(dir, 'report.json');
      const dump = join(dir, 'dump');
      const r = await runCli(
        [
          'local',
          '--world',
          '3',
          '--model',
          'gpt:2,16,2,8,32',
          '--batch',
          '6',
          '--samples',
          '60',
          '--steps',
          '4',
          '--wire-dtype',
          'fp32',
          '--out',
          out,
          '--dump',
          dump,
        ],
        60_000,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/model gpt:2,16,2,8,32 \(\d+ params/);
      expect(r.stdout).toMatch(/activations .* per rank: [\d.]+ (B|KiB|MiB) measured in every scheme/);
      const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
      expect(report.rows.map((x) => x.scheme)).toEqual(['dp', 'zero1', 'zero2', 'zero3']);
      expect(report.agreement?.agree).toBe(true);
      const row = (s: string) => report.rows.find((x) => x.scheme === s)!;
      expect(row('zero3').sentPerStep.payload / row('dp').sentPerStep.payload).toBeCloseTo(1.5, 6);
      const spec = new GptSpec({ layers: 2, dim: 16, heads: 2, seq: 8, vocab: 32 });
      for (const x of report.rows) {
        expect(x.params).toBe(spec.params);
        expect(x.resident.measured).toBe(x.resident.theory);
        expect(x.activations.measured).toBe(spec.activationBytes(2)); // 6 sequences over 3 ranks
        expect(x.activations.estimate).toBe(x.activations.measured);
      }
      // The dump: torch names for the parameters, and the tokens with each step's samples.
      const initial = parseSafetensors(readFileSync(join(dump, 'initial.safetensors')));
      expect(initial.get('h.1.attn.qkv.weight')!.shape).toEqual([48, 16]);
      expect(initial.get('tok_emb.weight')!.shape).toEqual([32, 16]);
      const data = parseSafetensors(readFileSync(join(dump, 'data.safetensors')));
      expect(data.get('tokens')!.shape).toEqual([60 * 8 + 1]);
      expect(data.get('batch_rows')!.shape).toEqual([4, 6]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a shape that does not work, naming it', async () => {
    const heads = await runCli(['local', '--model', 'gpt:2,30,4,8'], 10_000);
    expect(heads.code).toBe(2);
    expect(heads.stderr).toMatch(/--model: "gpt:2,30,4,8": DIM 30 does not divide into 4 heads/);
    const mlp = await runCli(['local', '--model', '8,8', '--recompute'], 10_000);
    expect(mlp.code).toBe(2);
    expect(mlp.stderr).toMatch(/--recompute: activation checkpointing is per transformer block; give a --model gpt:/);
  });
});
