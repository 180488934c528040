// The reference rule (test/helpers/reference.ts) can only fail on a real defect: on a tied-table Qwen2 run with
// accumulation, what only fp32 rounding moves passes it (the batch's samples in another order, every gradient an
// ulp off), and each defect that changes the arithmetic fails it (a missing 1/N, a wrong bias correction, a
// dropped micro-batch), each injected into PyTorch's replay of the same dump and judged as zerowire's result is.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import {
  describeVerdict,
  expectAsCloseAsTorch,
  judge,
  maxTensorDiff,
  replayBoth,
  runReplay,
  tensorsOf,
  type Reference,
  type Variant,
} from '../helpers/reference.js';
import { TORCH, requireTorch } from '../helpers/torch.js';

const SCRIPT = fileURLToPath(new URL('../helpers/torch_llama.py', import.meta.url));
const OLD_BOUND = 2e-5; // the fixed bound the Llama tests had

describe('the reference rule', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zerowire-rule-'));
  const dump = join(dir, 'dump');
  const steps = 3;
  const args = (o: string) => ['replay', join(dump, 'initial.safetensors'), join(dump, 'data.safetensors'), o, '2,64,4,2,172,32,64', String(steps), '0.001'];
  let ref: Reference;

  beforeAll(async () => {
    const config = {
      architectures: ['Qwen2ForCausalLM'],
      tie_word_embeddings: true,
      hidden_act: 'silu',
      hidden_size: 64,
      intermediate_size: 172,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      num_hidden_layers: 2,
      max_position_embeddings: 32,
      vocab_size: 64,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    const run = ['local', '--world', '4', '--hf-config', dir, '--scheme', 'dp,zero3', '--accumulate', '2', '--wire-dtype', 'fp32', '--batch', '8'];
    const r = await runCli([...run, '--samples', '32', '--steps', String(steps), '--preflight', 'off', '--dump', dump], 120_000);
    expect(r.code, r.stderr).toBe(0);
    if (TORCH) ref = await replayBoth(SCRIPT, args, dir);
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("zerowire's fp32 result passes it, each scheme", (ctx) => {
    requireTorch(ctx, 'the Qwen2 replay (test/helpers/torch_llama.py)');
    for (const scheme of ['dp', 'zero3']) expectAsCloseAsTorch(`qwen2 ${scheme}`, tensorsOf(join(dump, `final-${scheme}.safetensors`)), ref);
  });

  const variant = (v: Variant) => runReplay(SCRIPT, args, dir, 'float32', v);

  for (const v of ['permute', 'ulp'] as const)
    it(`lets through what only rounding moves: ${v}`, (ctx) => {
      requireTorch(ctx, 'the Qwen2 replay (test/helpers/torch_llama.py)');
      const moved = variant(v);
      const shift = maxTensorDiff(moved, ref.fp32);
      console.log(
        `${v}: moves torch's own fp32 result by ${shift.toExponential(2)} (the old fixed bound: ${OLD_BOUND.toExponential(0)}, ${(shift / OLD_BOUND).toFixed(2)} of it)`,
      );
      expect(shift, `${v} changed nothing: the variant did not run`).toBeGreaterThan(0);
      expectAsCloseAsTorch(`${v} judged by the rule`, moved, ref);
    });

  for (const v of ['unscaled', 'bias-step', 'drop-micro'] as const)
    it(`catches a defect: ${v}`, (ctx) => {
      requireTorch(ctx, 'the Qwen2 replay (test/helpers/torch_llama.py)');
      const verdict = judge(variant(v), ref);
      console.log(`${v}: ${describeVerdict(verdict)}`);
      expect(verdict.pass, `${v} passed the rule: ${describeVerdict(verdict)}`).toBe(false);
    });
});
