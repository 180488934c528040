// The Llama workload against PyTorch (test/helpers/torch_llama.py, written from Hugging Face's conventions):
// one forward and backward of llama:2,64,4,2,172,32 on two sequences (grouped-query attention, 2 query heads
// per key/value head) and one Adam step: the loss, the logits, every gradient and the updated weights, each
// judged by the reference rule (test/helpers/reference.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { adamUpdate } from '../../../shared/training/adam.js';
import { LlamaSpec } from '../../../shared/models/llama/spec.js';
import { Llama } from '../../../shared/models/llama/compute.js';
import { Rng } from '../../../shared/training/rng.js';
import { serializeSafetensors } from '../../../shared/io/safetensors.js';
import { toStateDict } from '../../../shared/io/state-dict.js';
import { requireTorch } from '../../helpers/torch.js';
import { expectAsCloseAsTorch, replayBoth, type Tensors } from '../../helpers/reference.js';

const SCRIPT = fileURLToPath(new URL('../../helpers/torch_llama.py', import.meta.url));

describe('llama', () => {
  it('names its tensors as LlamaForCausalLM, and refuses shapes it cannot be', () => {
    const spec = new LlamaSpec({ layers: 2, dim: 64, heads: 4, kvHeads: 2, ff: 172, seq: 32, vocab: 64 });
    const names = spec.tensors().map((t) => `${t.name} ${t.shape.join('x')}`);
    expect(names.slice(0, 4)).toEqual([
      'model.embed_tokens.weight 64x64',
      'model.layers.0.input_layernorm.weight 64',
      'model.layers.0.self_attn.q_proj.weight 64x64',
      'model.layers.0.self_attn.k_proj.weight 32x64',
    ]);
    expect(names.slice(-2)).toEqual(['model.norm.weight 64', 'lm_head.weight 64x64']);
    expect(spec.params).toBe(64 * 64 + 2 * (64 + 64 * 64 + 2 * 32 * 64 + 64 * 64 + 64 + 3 * 64 * 172) + 64 + 64 * 64);
    expect(() => new LlamaSpec({ layers: 1, dim: 64, heads: 4, kvHeads: 3, ff: 8, seq: 4, vocab: 8 })).toThrow(/HEADS 4 is not a multiple of KV_HEADS 3/);
    expect(() => new LlamaSpec({ layers: 1, dim: 12, heads: 4, kvHeads: 2, ff: 8, seq: 4, vocab: 8 })).toThrow(/head width 3 is odd/);
  });

  it.for([
    ['without biases (Llama)', false],
    ['with q/k/v biases (Qwen2)', true],
  ] as const)('matches PyTorch %s: logits, gradients and one Adam step, as close to float64 as torch', { timeout: 120_000 }, async ([, qkvBias], ctx) => {
    requireTorch(ctx, 'the Llama reference (test/helpers/torch_llama.py)');
    const shape = { layers: 2, dim: 64, heads: 4, kvHeads: 2, ff: 172, seq: 32, vocab: 64 };
    const spec = new LlamaSpec(shape, { qkvBias });
    const theta = spec.init(7);
    // Biases start at 0 (as Hugging Face's init): some values make them count in the forward pass too.
    if (qkvBias)
      for (const t of spec.tensors().filter((x) => x.name.endsWith('_proj.bias')))
        for (let i = 0; i < t.shape[0]; i++) theta[t.offset + i] = 0.05 * Math.sin(i + 1);
    const rows = 2;
    const rng = new Rng(11);
    const tokens = Int32Array.from({ length: rows * shape.seq }, () => Math.floor(rng.uniform() * shape.vocab));
    const targets = Int32Array.from({ length: rows * shape.seq }, () => Math.floor(rng.uniform() * shape.vocab));
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-llama-'));
    try {
      const input = toStateDict(spec, theta);
      input.set('tokens', { dtype: 'I32', shape: [rows, shape.seq], data: tokens });
      input.set('targets', { dtype: 'I32', shape: [rows, shape.seq], data: targets });
      writeFileSync(join(dir, 'in.safetensors'), serializeSafetensors(input));
      const ref = await replayBoth(SCRIPT, (o) => [join(dir, 'in.safetensors'), o, Object.values(shape).join(','), '0.01'], dir);
      const model = new Llama(spec);
      const grad = new Float32Array(spec.params);
      const loss = model.lossAndGradient(theta, tokens, rows, targets, grad);
      // Adam's first step is lr·g/(|g| + eps): a gradient of 3e-8 that differs in its second digit (as float
      // sums in another order do) moves the step by 5e-5. So the step is taken from PyTorch's own gradients:
      // it checks the update, the gradients are checked on their own.
      const refGrad = new Float32Array(spec.params);
      for (const t of spec.tensors()) refGrad.set(ref.fp32.get(`grad.${t.name}`)!, t.offset);
      const [m, v, stepped] = [new Float32Array(spec.params), new Float32Array(spec.params), Float32Array.from(theta)];
      adamUpdate(stepped, m, v, refGrad, 1, { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8 });
      const ours: Tensors = new Map<string, ArrayLike<number>>([
        ['logits', model.logits()],
        ['loss', [loss]],
      ]);
      for (const [name, t] of toStateDict(spec, grad, 'grad.')) ours.set(name, t.data as Float32Array);
      for (const [name, t] of toStateDict(spec, stepped, 'step.')) ours.set(name, t.data as Float32Array);
      const label = `llama ${qkvBias ? 'with q/k/v biases ' : ''}vs PyTorch`;
      expectAsCloseAsTorch(`${label}, loss`, ours, ref, (n) => n === 'loss');
      expectAsCloseAsTorch(`${label}, logits`, ours, ref, (n) => n === 'logits');
      expectAsCloseAsTorch(`${label}, gradients`, ours, ref, (n) => n.startsWith('grad.'));
      expectAsCloseAsTorch(`${label}, after one Adam step`, ours, ref, (n) => n.startsWith('step.'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
