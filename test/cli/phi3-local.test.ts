// A model added as a folder and one registry line (shared/models/phi3/): Phi-3's fused qkv_proj and
// gate_up_proj, laid out as the Llama's projections one after another, so the Llama's passes compute it; its
// own names in every dump; every scheme ends where torch.optim.Adam does on the same weights split as
// transformers splits them (test/helpers/torch_phi3.py), judged by the reference rule (test/helpers/reference.ts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseSafetensors } from '../../shared/io/safetensors.js';
import type { Report } from '../../shared/accounting/report.js';
import { runCli } from '../helpers/cli.js';
import { expectAsCloseAsTorch, replayBoth, tensorsOf } from '../helpers/reference.js';
import { requireTorch } from '../helpers/torch.js';

const SCRIPT = fileURLToPath(new URL('../helpers/torch_phi3.py', import.meta.url));
const SHAPE = '2,64,4,2,172,32,64';
const SCHEMES = ['dp', 'zero1', 'zero2', 'zero3', 'hsdp'];

describe('local --model phi3', () => {
  it('fused projections under their own names; every scheme ends where torch.optim.Adam does', async (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-phi3-'));
    try {
      const [out, dump, steps] = [join(dir, 'report.json'), join(dir, 'dump'), 3];
      const run = ['local', '--world', '4', '--shard-group', '2', '--model', `phi3:${SHAPE}`, '--scheme', SCHEMES.join(','), '--wire-dtype', 'fp32'];
      const r = await runCli(
        [...run, '--batch', '4', '--samples', '32', '--steps', String(steps), '--preflight', 'off', '--out', out, '--dump', dump],
        120_000,
      );
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
      expect(report.rows.map((x) => x.scheme)).toEqual(SCHEMES);
      for (const x of report.rows) expect(x.sentPerStep.payload, x.scheme).toBe(x.sentPerStep.theory);
      const initial = parseSafetensors(readFileSync(join(dump, 'initial.safetensors')));
      const names = [...initial.keys()];
      expect(names).toContain('model.layers.0.self_attn.qkv_proj.weight');
      expect(initial.get('model.layers.1.mlp.gate_up_proj.weight')!.shape).toEqual([2 * 172, 64]);
      expect(names.some((n) => /q_proj|gate_proj\./.test(n))).toBe(false);
      requireTorch(ctx, 'the Phi-3 replay (test/helpers/torch_phi3.py)');
      const ref = await replayBoth(SCRIPT, (o) => [join(dump, 'initial.safetensors'), join(dump, 'data.safetensors'), o, SHAPE, String(steps), '0.001'], dir);
      expect([...ref.fp32.keys()].sort()).toEqual([...names].sort());
      for (const scheme of SCHEMES) expectAsCloseAsTorch(`phi3 ${scheme} after ${steps} steps`, tensorsOf(join(dump, `final-${scheme}.safetensors`)), ref);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('refuses what it cannot do yet, naming the option', async () => {
    const r = await runCli(['local', '--model', 'phi3:2,64,4,2,172,32', '--lora', '4']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--lora: phi3: not built for its fused projections/);
  });
});
