// What LoRA changes in the what-if's work (adapter-work.ts) and in the theory: a frozen block's backward does
// the input gradients only, the adapters add their small products, the optimizer and DP's reduction cover the
// adapters alone, ZeRO-3 still gathers the whole base twice.
import { describe, expect, it } from 'vitest';
import { LlamaSpec } from '../../../shared/models/llama/spec.js';
import { ShardLayout } from '../../../shared/training/layout.js';
import { layerWork } from '../../../shared/whatif/model-passes.js';
import { gpuModel } from '../../../shared/models/registry.js';
import { trafficParts } from '../../../shared/accounting/theory.js';
import { SCHEME_TABLE } from '../../../shared/training/schemes/table.js';

const shape = { layers: 4, dim: 256, heads: 8, kvHeads: 4, ff: 688, seq: 128, vocab: 1000 };
const full = new LlamaSpec(shape);
const lora = new LlamaSpec(shape, {}, { lora: { rank: 8, alpha: 16 } });
const tokens = 2 * shape.seq;

describe('LoRA in the what-if', () => {
  it("a block's backward loses its weight gradients and gains its adapters' four products", () => {
    const block = 1; // embeddings are group 0
    const D = shape.dim;
    const K = (shape.kvHeads * D) / shape.heads;
    const linears = 2 * D * D + 2 * D * K + 3 * D * shape.ff;
    const adapters = 8 * (D + D) + 8 * (D + K) * 2 + 8 * (D + D) + 8 * (D + shape.ff) * 3; // r(in + out) per target
    const back = (s: LlamaSpec) => layerWork(gpuModel(s), block, 2, 'backward').flops;
    const fwd = (s: LlamaSpec) => layerWork(gpuModel(s), block, 2, 'forward').flops;
    expect(back(full) - back(lora)).toBe(2 * linears * tokens - 4 * adapters * tokens);
    expect(fwd(lora) - fwd(full)).toBe(2 * adapters * tokens);
  });

  it('the head stays frozen: its backward computes dX only', () => {
    const head = full.layers.length - 1;
    const V = shape.vocab;
    expect(layerWork(gpuModel(full), head, 2, 'backward').flops - layerWork(gpuModel(lora), head, 2, 'backward').flops).toBe(2 * V * shape.dim * tokens);
  });

  it('bytes: DP reduces the adapters only; ZeRO-3 gathers the whole base forward and all but the embeddings backward', () => {
    const N = 4;
    const s = new ShardLayout(lora, N, 0, 'layer').sizes();
    const trainable = s.unitPadded.reduce((a, p) => a + p, 0);
    expect(trainable).toBeLessThan(lora.params / 20);
    const dp = trafficParts(SCHEME_TABLE.dp, s, 'bf16');
    expect(dp).toEqual({ trainable: 2 * (N - 1) * (trainable / N) * 2, frozen: 0, host: 0, cross: 0 });
    const z3 = trafficParts(SCHEME_TABLE.zero3, s, 'bf16');
    const frozen = s.frozen!.unitPadded;
    const embeddings = frozen[0];
    const base = frozen.reduce((a, p) => a + p, 0);
    expect(z3.frozen).toBe((N - 1) * ((base + (base - embeddings)) / N) * 2);
    expect(z3.trainable).toBe(3 * (N - 1) * (trainable / N) * 2);
  });
});
