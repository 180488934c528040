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
  const { dim: D, heads: H, kvHeads: KV, ff: FF, seq } = spec.shape;
  const K = KV * (D / H);
  return decoderPasses(spec, (rows, pass) => llamaBlockWork(spec.shape, seq, rows, pass), 2 * (6 * D + 2 * K + 4 * FF) + 2 * 4 * D + 8);
}
