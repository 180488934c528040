// The Llama on a modeled GPU: embeddings, blocks (RMSNorm, rotary, grouped-query flash attention, SwiGLU) and
// the head.
import { embeddingWork, headWork, llamaBlockWork } from '../../whatif/model-work.js';
import type { GpuPasses } from '../../whatif/model-passes.js';
import type { LlamaSpec } from './spec.js';

export const llamaPasses = (spec: LlamaSpec): GpuPasses => ({
  layerWork: (layer, rows, pass) => {
    const { dim, seq, vocab } = spec.shape;
    switch (spec.layers[layer].kind) {
      case 'embeddings':
        return embeddingWork(dim, seq, vocab, rows, pass);
      case 'head':
        return headWork(dim, vocab, rows * seq, pass);
      default:
        return llamaBlockWork(spec.shape, seq, rows, pass);
    }
  },
  recomputes: (layer) => spec.layers[layer].block >= 0, // a block (the embeddings' and the head's are -1)
  tokens: (rows) => rows * spec.shape.seq,
  /** Per token a Llama block keeps, in bf16, its input and both norms' outputs, q, k, v, the attention's output,
   *  the residual, and gate, up, SiLU(gate) and their product (the SwiGLU keeps four FF-wide tensors where
   *  GELU's MLP keeps two 4D ones), plus each norm's fp32 input; no T x T scores (flash attention).
   *  Checkpointed, its input only, and one block's insides at a time. The head keeps fp32 logits. */
  activationBytes: (rows, recompute) => {
    const { layers: L, dim: D, heads: H, kvHeads: KV, ff: FF, seq: T, vocab: V } = spec.shape;
    const tokens = rows * T;
    const K = KV * (D / H);
    const block = (2 * (6 * D + 2 * K + 4 * FF) + 2 * 4 * D + 8) * tokens;
    const blocks = recompute ? L * 2 * D * tokens + block : L * block;
    return 2 * D * tokens + blocks + tokens * (2 * D + 4 * V);
  },
});
