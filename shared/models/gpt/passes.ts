// The GPT on a modeled GPU: embeddings, blocks (flash attention: no T x T scores kept) and the head.
import { blockWork, embeddingWork, headWork } from '../../whatif/model-work.js';
import type { GpuPasses } from '../../whatif/model-passes.js';
import type { GptSpec } from './spec.js';

export const gptPasses = (spec: GptSpec): GpuPasses => ({
  layerWork: (layer, rows, pass) => {
    const { dim, seq, vocab } = spec.shape;
    switch (spec.layers[layer].kind) {
      case 'embeddings':
        return embeddingWork(dim, seq, vocab, rows, pass);
      case 'head':
        return headWork(dim, vocab, rows * seq, pass);
      default:
        return blockWork(dim, seq, rows, pass);
    }
  },
  recomputes: (layer) => spec.layers[layer].block >= 0, // a block (the embeddings' and the head's are -1)
  tokens: (rows) => rows * spec.shape.seq,
  /** A GPT block keeps 32 bytes per token per unit of width: Korthikanti et al. 2022's 34·s·b·h without its two
   *  dropout masks, and without its 5·a·s²·b of attention scores, which flash attention never stores.
   *  Checkpointed, a block keeps only its input (2·D per token) and one block's insides exist at a time. The
   *  head keeps fp32 logits. */
  activationBytes: (rows, recompute) => {
    const { layers: L, dim: D, seq: T, vocab: V } = spec.shape;
    const tokens = rows * T;
    const block = 32 * D * tokens;
    const blocks = recompute ? L * 2 * D * tokens + block : L * block;
    return 2 * D * tokens + blocks + tokens * (2 * D + 4 * V);
  },
});
