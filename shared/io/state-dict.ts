// The flat parameter vector <-> torch-style named tensors, by the model's own names and shapes
// (MLP: layers.0.weight shaped (out, in), layers.0.bias; GPT: tok_emb.weight, h.0.attn.qkv.weight, ...).
import type { ModelSpec } from '../models/registry.js';
import { ShardLayout } from '../training/layout.js';
import type { StTensor } from './safetensors.js';

const count = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

export function toStateDict(spec: ModelSpec, flat: Float32Array, prefix = ''): Map<string, StTensor> {
  if (flat.length < spec.params) throw new RangeError(`state dict: ${flat.length} values for ${spec.params} parameters`);
  const out = new Map<string, StTensor>();
  for (const t of spec.tensors()) out.set(`${prefix}${t.name}`, { dtype: 'F32', shape: t.shape, data: flat.slice(t.offset, t.offset + count(t.shape)) });
  return out;
}

export function fromStateDict(spec: ModelSpec, tensors: Map<string, StTensor>, prefix = ''): Float32Array {
  const flat = new Float32Array(spec.params);
  for (const t of spec.tensors()) {
    const name = `${prefix}${t.name}`;
    const n = count(t.shape);
    const got = tensors.get(name);
    if (!got) throw new Error(`state dict: missing tensor ${name}`);
    if (got.dtype !== 'F32' || got.data.length !== n)
      throw new Error(`state dict: ${name} should be F32 with ${n} values, got ${got.dtype} with ${got.data.length}`);
    flat.set(got.data as Float32Array, t.offset);
  }
  return flat;
}

/** What trains, as named tensors, from the trainable flat vector (a LoRA run's adapters under PEFT's names, as
 *  PEFT saves an adapter; under --freeze the groups that train): what a fine-tuning checkpoint consolidates to. */
export function trainableStateDict(spec: ModelSpec, trainable: Float32Array): Map<string, StTensor> {
  const theta = new ShardLayout(spec, 1, 0, 'layer').merge(new Float32Array(spec.params), trainable);
  const trains = (offset: number) => spec.layers.some((g) => offset >= g.offset + g.frozen && offset < g.offset + g.size);
  const all = toStateDict(spec, theta);
  return new Map(
    spec
      .tensors()
      .filter((t) => trains(t.offset))
      .map((t) => [t.name, all.get(t.name)!]),
  );
}
