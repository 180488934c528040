// What fine-tuning changes in a group's GPU work (training/adapters.ts): a frozen Linear's backward computes its
// input's gradient but no weight gradient (autograd skips what does not require grad), and each LoRA adapter
// adds PEFT's ops: lora_A and lora_B products, the scaling and the add forward; their four products (dB, dh,
// dA and the input's share) and the elementwise gradients backward.
import type { Adapter } from '../training/adapters.js';
import type { ModelGroup } from '../training/model-spec.js';
import { addWork, type Work } from './gpu-cost.js';

const BF16 = 2;

/** A group as the what-if sees it: its tensors (Linear weights are 2-D), its adapters, its frozen prefix. */
export type AdaptableGroup = ModelGroup;

/** `base` (the group's work untouched) with its frozen Linears' weight gradients taken out and its adapters' work added. */
export function adaptedWork(g: AdaptableGroup, tokens: number, pass: 'forward' | 'backward', base: Work): Work {
  let work = base;
  if (pass === 'backward' && g.kind !== 'embeddings') {
    const frozen = g.tensors.filter((t) => t.shape.length === 2 && !t.name.includes('.lora_') && t.offset - g.offset < g.frozen);
    const skipped = frozen.reduce((s, t) => s + t.shape[0] * t.shape[1], 0);
    work = { ...work, flops: work.flops - 2 * skipped * tokens };
  }
  for (const ad of g.adapters) work = addWork(work, adapterWork(ad, tokens, pass));
  return work;
}

/** One adapter on `tokens` tokens. Forward: x·Aᵀ, h·Bᵀ, the scaling, the add (an output-wide tensor written,
 *  scaled, added: about 12 bytes per output per token). Backward: four products and the gradients' scaling
 *  and add, twice the forward's bytes plus the input gradient's add. */
function adapterWork(ad: Adapter, tokens: number, pass: 'forward' | 'backward'): Work {
  const { inputs: I, outputs: O, rank: r } = ad;
  if (pass === 'forward') return { kernels: 4, flops: 2 * r * (I + O) * tokens, bytes: (6 * O + 2 * r) * tokens * BF16 };
  return { kernels: 7, flops: 4 * r * (I + O) * tokens, bytes: (12 * O + 3 * I + 4 * r) * tokens * BF16 };
}

/** Bytes a bf16 framework keeps per token for the adapters of these groups: each one's x·Aᵀ. */
export function adapterActivationBytes(groups: readonly AdaptableGroup[], tokens: number): number {
  return groups.reduce((s, g) => s + g.adapters.reduce((t, ad) => t + ad.rank * tokens * BF16, 0), 0);
}
