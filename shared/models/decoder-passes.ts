// What the decoders' GPU passes share: the embeddings and the head run the same ops in both (a lookup; a norm,
// the vocabulary product and fp32 logits), a unit recomputes when it is a block, and the activations a bf16
// framework with flash attention keeps follow one form. A model gives its block's work and what its block
// keeps per token.
import type { DecoderGroup } from '../training/decoder.js';
import { embeddingWork, headWork } from '../whatif/model-work.js';
import type { GpuPasses } from '../whatif/model-passes.js';
import type { Work } from '../whatif/gpu-cost.js';

interface DecoderShape {
  layers: number;
  dim: number;
  seq: number;
  vocab: number;
}

export function decoderPasses(
  spec: { readonly layers: readonly DecoderGroup[]; readonly shape: DecoderShape },
  block: (rows: number, pass: 'forward' | 'backward') => Work,
  blockBytesPerToken: number,
): GpuPasses {
  const { layers: L, dim: D, seq: T, vocab: V } = spec.shape;
  return {
    layerWork: (layer, rows, pass) => {
      switch (spec.layers[layer].kind) {
        case 'embeddings':
          return embeddingWork(D, T, V, rows, pass);
        case 'head':
          return headWork(D, V, rows * T, pass);
        default:
          return block(rows, pass);
      }
    },
    recomputes: (layer) => spec.layers[layer].block >= 0, // a block (the embeddings' and the head's are -1)
    tokens: (rows) => rows * T,
    /** The embeddings' output (bf16), every block's `blockBytesPerToken` (checkpointed: its input only, and one
     *  block's insides at a time), and the head's norm output (bf16) and fp32 logits. */
    activationBytes: (rows, recompute) => {
      const tokens = rows * T;
      const block = blockBytesPerToken * tokens;
      const blocks = recompute ? L * 2 * D * tokens + block : L * block;
      return 2 * D * tokens + blocks + tokens * (2 * D + 4 * V);
    },
  };
}
