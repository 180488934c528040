// The Llama on a modeled GPU: embeddings, blocks (RMSNorm, rotary, grouped-query flash attention, SwiGLU) and
// the head.
import { llamaBlockWork } from '../../whatif/model-work.js';
import type { GpuPasses } from '../../whatif/model-passes.js';
import { decoderPasses } from '../decoder-passes.js';
import type { LlamaSpec } from './spec.js';

/** Per token a Llama block keeps, in bf16, its input and both norms' outputs, q, k, v, the attention's output,
 *  the residual, and gate, up, SiLU(gate) and their product (the SwiGLU keeps four FF-wide tensors where GELU's
 *  MLP keeps two 4D ones), plus each norm's fp32 input; no T x T scores (flash attention). */
export function llamaPasses(spec: LlamaSpec): GpuPasses {
  const { dim: D, ff: FF, seq } = spec.shape;
  const { Q, K } = spec.widths;
  const shape = { ...spec.shape, headDim: spec.headDim, qkNorm: spec.qkNorm };
  // Qwen3's per-head norms keep q and k before them (bf16) and their fp32 inputs
  const qkNorms = spec.qkNorm ? 6 * (Q + K) : 0;
  return decoderPasses(spec, (rows, pass) => llamaBlockWork(shape, seq, rows, pass), 2 * (4 * D + 2 * Q + 2 * K + 4 * FF) + 2 * 4 * D + 8 + qkNorms);
}
