import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { maxAbsDiff } from '../../helpers/train.js';
import { adamUpdate } from '../../../shared/training/adam.js';
import { Mlp, MlpSpec } from '../../../shared/models/mlp/mlp.js';
import { parseSafetensors } from '../../../shared/io/safetensors.js';
import { fromStateDict, toStateDict } from '../../../shared/io/state-dict.js';

const ref = parseSafetensors(readFileSync(new URL('../../fixtures/mlp_gelu_adam.safetensors', import.meta.url)));
const f32 = (name: string) => ref.get(name)!.data as Float32Array;
const spec = new MlpSpec([16, 32, 32, 4]);
const x = f32('x');
const y = Int32Array.from(ref.get('y')!.data as BigInt64Array, Number);
const rows = 8;

/** Full forward + backward over the flat vector: the model used one layer at a time. */
function lossAndGrad(theta: Float32Array) {
  const mlp = new Mlp(spec);
  const grad = new Float32Array(spec.params);
  const loss = mlp.lossAndGradient(theta, x, rows, y, grad);
  return { loss, grad, pre: spec.layers.map((l) => mlp.pre(l.index).slice()) };
}

describe('MLP against PyTorch 1.13 reference vectors', () => {
  const theta0 = fromStateDict(spec, ref, 'init.');

  it('pre-activations, logits and loss match within 1e-5', () => {
    const { loss, pre } = lossAndGrad(theta0);
    for (const l of spec.layers) expect(maxAbsDiff(pre[l.index], f32(`forward.layers.${l.index}.pre`))).toBeLessThan(1e-5);
    expect(maxAbsDiff(pre[2], f32('forward.logits'))).toBeLessThan(1e-5);
    expect(Math.abs(loss - f32('loss.step0')[0])).toBeLessThan(1e-5);
  });

  it('gradients match within 1e-5', () => {
    const { grad } = lossAndGrad(theta0);
    expect(maxAbsDiff(grad, fromStateDict(spec, ref, 'grad.step0.'))).toBeLessThan(1e-5);
  });

  it('three Adam steps match torch.optim.Adam within 1e-5', () => {
    const theta = theta0.slice();
    const m = new Float32Array(spec.params);
    const v = new Float32Array(spec.params);
    const losses = [];
    for (let t = 1; t <= 3; t++) {
      const { loss, grad } = lossAndGrad(theta);
      losses.push(loss);
      adamUpdate(theta, m, v, grad, t, { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8 });
    }
    expect(maxAbsDiff(Float32Array.from(losses), f32('adam.losses'))).toBeLessThan(1e-5);
    expect(maxAbsDiff(theta, fromStateDict(spec, ref, 'adam.step3.'))).toBeLessThan(1e-5);
  });

  it('state dict round trip keeps torch names and shapes', () => {
    const sd = toStateDict(spec, theta0);
    expect(sd.get('layers.0.weight')!.shape).toEqual([32, 16]);
    expect(sd.get('layers.2.bias')!.shape).toEqual([4]);
    expect(fromStateDict(spec, sd)).toEqual(theta0);
  });

  it('refuses malformed widths with a clear message', () => {
    expect(() => new MlpSpec([16])).toThrow(/at least two widths/);
    expect(() => new MlpSpec([16, 0, 4])).toThrow(/positive integers/);
  });
});
