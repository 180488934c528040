// The GPT against PyTorch 1.13 (test/fixtures/gpt_tiny_adam.safetensors: vocab 64, sequence 16, width 32,
// 4 heads, 2 blocks, batch 4): logits, loss, every gradient and three Adam steps within 1e-5, computed one
// unit at a time as the schemes drive it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { maxAbsDiff } from '../../helpers/train.js';
import { adamUpdate } from '../../../shared/training/adam.js';
import { GptSpec } from '../../../shared/models/gpt/spec.js';
import { Gpt } from '../../../shared/models/gpt/compute.js';
import { parseSafetensors } from '../../../shared/io/safetensors.js';

const ref = parseSafetensors(readFileSync(new URL('../../fixtures/gpt_tiny_adam.safetensors', import.meta.url)));
const f32 = (name: string) => ref.get(name)!.data as Float32Array;
const ints = (name: string) => Int32Array.from(ref.get(name)!.data as BigInt64Array, Number);
const spec = new GptSpec({ layers: 2, dim: 32, heads: 4, seq: 16, vocab: 64 });
const tokens = ints('tokens');
const targets = ints('targets');
const rows = 4;

/** The flat parameter vector from tensors named `${prefix}${torch name}`. */
function flat(prefix: string): Float32Array {
  const theta = new Float32Array(spec.params);
  for (const t of spec.tensors()) {
    const got = ref.get(`${prefix}${t.name}`);
    expect(got?.shape, `${prefix}${t.name}`).toEqual(t.shape);
    theta.set(got!.data as Float32Array, t.offset);
  }
  return theta;
}

function lossAndGrad(theta: Float32Array, recompute = false) {
  const gpt = new Gpt(spec, { recompute });
  gpt.start(tokens, rows);
  const of = (a: Float32Array, u: number) => a.subarray(spec.layers[u].offset, spec.layers[u].offset + spec.layers[u].size);
  for (const g of spec.layers) gpt.forward(g.index, of(theta, g.index));
  const loss = gpt.loss(targets);
  const grad = new Float32Array(spec.params);
  for (const g of [...spec.layers].reverse()) gpt.backward(g.index, of(theta, g.index), of(grad, g.index));
  return { loss, grad, logits: gpt.logits().slice(), activationBytes: gpt.activationBytes };
}

describe('GPT against PyTorch 1.13 reference vectors', () => {
  const theta0 = flat('init.');

  it('has the reference names, shapes and parameter count; units are the embeddings, each block, ln_f + head', () => {
    expect(spec.layers.map((g) => g.kind)).toEqual(['embeddings', 'block', 'block', 'head']);
    const count = [...ref.keys()].filter((k) => k.startsWith('init.')).reduce((t, k) => t + f32(k).length, 0);
    expect(spec.params).toBe(count);
  });

  it('logits and loss match within 1e-5', () => {
    const { loss, logits } = lossAndGrad(theta0);
    expect(maxAbsDiff(logits, f32('forward.logits'))).toBeLessThan(1e-5);
    expect(Math.abs(loss - f32('loss.step0')[0])).toBeLessThan(1e-5);
  });

  it('every gradient matches within 1e-5', () => {
    const { grad } = lossAndGrad(theta0);
    const want = flat('grad.step0.');
    for (const t of spec.tensors()) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      expect(maxAbsDiff(grad.subarray(t.offset, t.offset + n), want.subarray(t.offset, t.offset + n)), t.name).toBeLessThan(1e-5);
    }
  });

  // The k bias has an exactly zero gradient (softmax ignores a constant added to a row of scores), so both
  // torch and we get rounding noise there, ~1e-10; Adam divides by sqrt(v) + 1e-8 and turns that noise into
  // steps of up to lr. Elements whose reference gradient is below eps are compared for being noise, not
  // for the value the noise drove them to; every other element must match within 1e-5.
  it('three Adam steps match torch.optim.Adam within 1e-5 (where the gradient is more than rounding noise)', () => {
    const theta = theta0.slice();
    const m = new Float32Array(spec.params);
    const v = new Float32Array(spec.params);
    const losses = [];
    let g0 = new Float32Array(0);
    for (let t = 1; t <= 3; t++) {
      const { loss, grad } = lossAndGrad(theta);
      if (t === 1) g0 = grad;
      losses.push(loss);
      adamUpdate(theta, m, v, grad, t, { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8 });
    }
    expect(maxAbsDiff(Float32Array.from(losses), f32('adam.losses'))).toBeLessThan(1e-5);
    const want = flat('adam.step3.');
    const torchG0 = flat('grad.step0.');
    const noise: string[] = [];
    for (const t of spec.tensors()) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      for (let i = t.offset; i < t.offset + n; i++) {
        if (torchG0[i] !== 0 && Math.abs(torchG0[i]) < 1e-8) {
          noise.push(t.name);
          expect(Math.abs(g0[i]), `${t.name}[${i - t.offset}]: our gradient is noise too`).toBeLessThan(1e-8);
        } else expect(Math.abs(theta[i] - want[i]), `${t.name}[${i - t.offset}]`).toBeLessThan(1e-5);
      }
    }
    // Both blocks' k biases (32 each), and at most a few other elements out of 27k. (Exact zeros, such as the
    // embeddings of tokens not in the batch, are compared like everything else.)
    expect(noise.filter((n) => n.endsWith('attn.qkv.bias')).length).toBeGreaterThanOrEqual(64);
    expect(noise.filter((n) => !n.endsWith('attn.qkv.bias')).length).toBeLessThan(8);
  });

  it('the activations it keeps are exactly what the spec estimates', () => {
    expect(lossAndGrad(theta0).activationBytes).toBe(spec.activationBytes(rows));
  });

  it('with --recompute (checkpointing per block): the same gradients bit for bit, and fewer activations kept', () => {
    const plain = lossAndGrad(theta0);
    const re = lossAndGrad(theta0, true);
    expect(re.loss).toBe(plain.loss);
    expect(Array.from(re.grad)).toEqual(Array.from(plain.grad));
    expect(re.activationBytes).toBe(spec.activationBytes(rows, true));
    expect(re.activationBytes).toBeLessThan(plain.activationBytes);
  });
});
