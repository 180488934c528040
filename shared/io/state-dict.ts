// The flat parameter vector <-> torch-style named tensors (layers.0.weight shaped (out, in), layers.0.bias).
import type { MlpSpec } from '../training/mlp.js';
import type { StTensor } from './safetensors.js';

export function toStateDict(spec: MlpSpec, flat: Float32Array, prefix = ''): Map<string, StTensor> {
  if (flat.length < spec.params) throw new RangeError(`state dict: ${flat.length} values for ${spec.params} parameters`);
  const out = new Map<string, StTensor>();
  for (const l of spec.layers) {
    const nw = l.outputs * l.inputs;
    out.set(`${prefix}layers.${l.index}.weight`, { dtype: 'F32', shape: [l.outputs, l.inputs], data: flat.slice(l.offset, l.offset + nw) });
    out.set(`${prefix}layers.${l.index}.bias`, { dtype: 'F32', shape: [l.outputs], data: flat.slice(l.offset + nw, l.offset + l.size) });
  }
  return out;
}

export function fromStateDict(spec: MlpSpec, tensors: Map<string, StTensor>, prefix = ''): Float32Array {
  const flat = new Float32Array(spec.params);
  for (const l of spec.layers) {
    const nw = l.outputs * l.inputs;
    for (const [name, at, n] of [
      [`${prefix}layers.${l.index}.weight`, l.offset, nw],
      [`${prefix}layers.${l.index}.bias`, l.offset + nw, l.outputs],
    ] as const) {
      const t = tensors.get(name);
      if (!t) throw new Error(`state dict: missing tensor ${name}`);
      if (t.dtype !== 'F32' || t.data.length !== n) throw new Error(`state dict: ${name} should be F32 with ${n} values, got ${t.dtype} with ${t.data.length}`);
      flat.set(t.data as Float32Array, at);
    }
  }
  return flat;
}
