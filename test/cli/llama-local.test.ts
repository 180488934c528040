// `zerowire local --model llama:...`: every scheme (HSDP included) with gradient accumulation, fp32 on the
// wire, against a full-batch torch.optim.Adam replay of the dump (test/helpers/torch_llama.py): the final
// weights of every scheme as close to the float64 replay as torch's fp32 one is (test/helpers/reference.ts);
// bytes and memory as theory.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../shared/accounting/report.js';
import { LlamaSpec } from '../../shared/models/llama/spec.js';
import { runCli } from '../helpers/cli.js';
import { expectAsCloseAsTorch, replayBoth, tensorsOf } from '../helpers/reference.js';
import { requireTorch } from '../helpers/torch.js';

const SCRIPT = fileURLToPath(new URL('../helpers/torch_llama.py', import.meta.url));

describe('local --model llama', () => {
  it('every scheme and HSDP, with --accumulate 2, ends where full-batch torch.optim.Adam does', async (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-llama-'));
    try {
      const [out, dump, steps] = [join(dir, 'report.json'), join(dir, 'dump'), 4];
      const model = 'llama:2,64,4,2,172,32';
      const args = [
        'local',
        '--world',
        '4',
        '--model',
        model,
        '--scheme',
        'dp,zero1,zero2,zero3,hsdp',
        '--shard-group',
        '2',
        '--accumulate',
        '2',
        '--wire-dtype',
        'fp32',
      ];
      const r = await runCli(
        [...args, '--batch', '8', '--samples', '64', '--steps', String(steps), '--preflight', 'off', '--out', out, '--dump', dump],
        120_000,
      );
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
      expect(report.rows.map((x) => x.scheme)).toEqual(['dp', 'zero1', 'zero2', 'zero3', 'hsdp']);
      for (const x of report.rows) {
        expect(x.sentPerStep.payload, x.scheme).toBe(x.sentPerStep.theory);
        expect(x.resident.measured, x.scheme).toBe(x.resident.theory);
        expect(x.peak.measured, x.scheme).toBe(x.peak.theory);
        expect(x.activations.measured, x.scheme).toBe(x.activations.estimate); // the band is what the block keeps, as counted
      }
      expect(report.agreement?.agree).toBe(true);
      requireTorch(ctx, 'the Llama replay (test/helpers/torch_llama.py)');
      const initial = [join(dump, 'initial.safetensors'), join(dump, 'data.safetensors')];
      const ref = await replayBoth(SCRIPT, (o) => ['replay', ...initial, o, '2,64,4,2,172,32,64', String(steps), '0.001'], dir);
      for (const scheme of ['dp', 'zero1', 'zero2', 'zero3', 'hsdp'])
        expectAsCloseAsTorch(`llama ${scheme} after ${steps} steps`, tensorsOf(join(dump, `final-${scheme}.safetensors`)), ref);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  // A tiny config.json through --hf-config: every scheme three steps, then the same from the dump's initial
  // weights with full-batch torch.optim.Adam; `check` reads the run's output first.
  const SCHEMES = ['dp', 'zero1', 'zero2', 'zero3', 'hsdp'];
  const TINY = { hidden_act: 'silu', hidden_size: 64, intermediate_size: 172, num_attention_heads: 4, num_key_value_heads: 2, num_hidden_layers: 2 };
  const REST = { max_position_embeddings: 32, vocab_size: 64, rms_norm_eps: 1e-6, rope_theta: 10000 };
  async function againstTorch(
    ctx: Parameters<typeof requireTorch>[0],
    name: string,
    config: Record<string, unknown>,
    check: (stdout: string, report: Report) => void,
  ): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), `zerowire-${name}-`));
    try {
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...TINY, ...REST, ...config }));
      const [out, dump, steps] = [join(dir, 'report.json'), join(dir, 'dump'), 3];
      const run = ['local', '--world', '4', '--shard-group', '2', '--hf-config', dir, '--scheme', SCHEMES.join(','), '--wire-dtype', 'fp32', '--batch', '4'];
      const r = await runCli([...run, '--samples', '32', '--steps', String(steps), '--preflight', 'off', '--out', out, '--dump', dump], 120_000);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
      expect(report.rows.map((x) => x.scheme)).toEqual(SCHEMES);
      for (const x of report.rows) expect(x.sentPerStep.payload, x.scheme).toBe(x.sentPerStep.theory);
      check(r.stdout, report);
      requireTorch(ctx, `the ${name} replay (test/helpers/torch_llama.py)`);
      const initial = [join(dump, 'initial.safetensors'), join(dump, 'data.safetensors')];
      const ref = await replayBoth(SCRIPT, (o) => ['replay', ...initial, o, '2,64,4,2,172,32,64', String(steps), '0.001'], dir);
      for (const scheme of SCHEMES) expectAsCloseAsTorch(`${name} ${scheme} after ${steps} steps`, tensorsOf(join(dump, `final-${scheme}.safetensors`)), ref);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const SHAPE = { layers: 2, dim: 64, heads: 4, kvHeads: 2, ff: 172, seq: 32, vocab: 64 };

  it('a Qwen2 config.json (q/k/v biases, tied embeddings) through --hf-config: every scheme ends where torch.optim.Adam does', async (ctx) => {
    const qwen2 = { architectures: ['Qwen2ForCausalLM'], tie_word_embeddings: true, torch_dtype: 'bfloat16' };
    await againstTorch(ctx, 'qwen2', qwen2, (stdout) => {
      expect(stdout).toMatch(
        /config\.json read as llama \(key, value, what it became\):\n {2}architectures +\["Qwen2ForCausalLM"\] +llama, q\/k\/v with biases/,
      );
      expect(stdout).toMatch(/torch_dtype +"bfloat16" +left aside: no bearing on a training step/);
      expect(stdout).toMatch(/tie_word_embeddings +true +tied/);
    });
  }, 180_000);

  it('a Qwen3 config.json (q/k norms per head, heads narrower than DIM/HEADS) through --hf-config: every scheme ends where torch.optim.Adam does', async (ctx) => {
    const qwen3 = { architectures: ['Qwen3ForCausalLM'], head_dim: 8, tie_word_embeddings: false, attention_bias: false };
    const spec = new LlamaSpec(SHAPE, { headDim: 8, qkNorm: true });
    expect(spec.tensors().some((t) => t.name === 'model.layers.1.self_attn.k_norm.weight')).toBe(true);
    await againstTorch(ctx, 'qwen3', qwen3, (stdout, report) => {
      expect(stdout).toMatch(/architectures +\["Qwen3ForCausalLM"\] +llama, q and k RMSNorm-ed per head \(qkNorm\)/);
      expect(stdout).toMatch(/head_dim +8 +headDim/);
      for (const x of report.rows) expect(x.activations.measured, x.scheme).toBe(x.activations.estimate);
    });
  }, 180_000);

  it('--recompute keeps each block its input only and trains the same', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-llama-rc-'));
    try {
      const base = ['local', '--world', '2', '--model', 'llama:2,64,4,2,172,32', '--batch', '4', '--samples', '32', '--steps', '3', '--scheme', 'dp,zero3'];
      const reports = [];
      for (const extra of [[], ['--recompute']]) {
        const out = join(dir, `r${extra.length}.json`);
        const r = await runCli([...base, '--wire-dtype', 'fp32', '--preflight', 'off', ...extra, '--out', out], 60_000);
        expect(r.code, r.stderr).toBe(0);
        reports.push(JSON.parse(readFileSync(out, 'utf8')) as Report);
      }
      const [plain, recomputed] = reports;
      expect(recomputed.rows.map((x) => x.finalLoss)).toEqual(plain.rows.map((x) => x.finalLoss));
      for (const x of recomputed.rows) expect(x.activations.measured).toBe(x.activations.estimate);
      expect(recomputed.rows[0].activations.measured).toBeLessThan(0.6 * plain.rows[0].activations.measured);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
