// The GPU work of our models' pieces, counted as a PyTorch eager run would launch them (bf16, flash attention):
// kernels per op, tensor-core FLOPs, and the bytes the other ops move. The GPT block is the shape
// test/fixtures/gpu/h200.jsonl timed (fused qkv, pre-LN, tanh GELU): 48-64 kernels forward + backward there.
import type { Work } from './gpu-cost.js';

const BF16 = 2;

/** A GPT block on `rows` sequences of `seq` tokens of width `dim`: 12D^2 + 13D parameters. */
export function blockWork(dim: number, seq: number, rows: number, pass: 'forward' | 'backward'): Work {
  const D = dim;
  const tokens = rows * seq;
  const params = 12 * D * D + 13 * D;
  // Causal flash attention computes half of QK^T and PV (2 x 2·T^2·D per sequence, halved); its backward
  // does five such products to the forward's two.
  const attention = 2 * rows * seq * seq * D;
  if (pass === 'forward')
    // ln_1, qkv, head split, attention, head merge, proj, add, ln_2, fc, GELU, proj, add, and the views'
    // copies: 16 kernels; the non-GEMM ops read and write ~30 activations of width D per token.
    return { kernels: 16, flops: 2 * params * tokens + attention, bytes: 30 * D * tokens * BF16 };
  // Autograd's backward of the same: about 40 kernels (both products per Linear, bias sums, the norms'
  // and GELU's backward, the residual's gradient copies), twice the forward's bytes.
  return { kernels: 40, flops: 4 * params * tokens + 2.5 * attention, bytes: 60 * D * tokens * BF16 };
}

/** A Llama-style block's shape: width, query heads, key/value heads, the SwiGLU width. */
export interface LlamaBlockShape {
  dim: number; // D
  heads: number; // H query heads, D/H wide each
  kvHeads: number; // KV key/value heads (grouped-query attention: H/KV query heads share each)
  ff: number; // FF, the SwiGLU MLP's width
  headDim?: number; // each head's width where a config gives its own (Qwen3's head_dim); D/H otherwise
  qkNorm?: boolean; // q and k RMSNorm-ed per head (Qwen3)
}

/**
 * A Llama-style block (RMSNorm, rotary q and k, grouped-query attention, SwiGLU, no biases) as Hugging Face's
 * LlamaDecoderLayer launches it in eager PyTorch, op by op; nothing here is fitted to a Llama row. Per token,
 * forward, with d = D/H and K = KV·d (the k/v width), bf16 unless said:
 * - each RMSNorm: cast to fp32 (2D read, 4D written), square (4D, 4D), mean (4D read), rsqrt of it plus eps
 *   (per token), scale (4D, 4D), cast back (4D, 2D), times the weight (2D, 2D): 8 kernels, 36·D bytes;
 * - q, k, v projections (D·D + 2·D·K weights) and o (D·D): 4 products;
 * - rotary on q and on k: rotate_half's slices, negation and concatenation, two multiplies by cos and sin, an
 *   add: 5 kernels each, 4 bytes per element per op (2 read, 2 written): 20·(D + K);
 * - GQA: k and v repeated to the H query heads (repeat_interleave): 2 kernels, 2·(2K + 2D);
 * - SDPA's layout: q, k, v made contiguous heads-first, the output back: 4 copies, 4·4D;
 * - flash attention (causal): 1 kernel, 2·T²·D per sequence halved, as the GPT's;
 * - two residual adds: 2 kernels, 6D each;
 * - SwiGLU: gate and up (2·D·FF), SiLU of the gate (4·FF), its product with up (6·FF), down (FF·D): 3 products
 *   and 2 kernels.
 * Backward is autograd's of the same: each product twice (input and weight gradients), each elementwise op's
 * gradient one or two kernels, the casts' and the norms' in fp32: 2.5 times the forward's kernels (as for the
 * GPT block's 40 to 16) and twice its bytes.
 */
export function llamaBlockWork(shape: LlamaBlockShape, seq: number, rows: number, pass: 'forward' | 'backward'): Work {
  const { dim: D, heads: H, kvHeads: KV, ff: FF } = shape;
  const hd = shape.headDim ?? D / H;
  const [Q, K] = [H * hd, KV * hd]; // the queries' width (D unless the heads have their own) and the keys'
  const tokens = rows * seq;
  const params = 2 * D * Q + 2 * D * K + 3 * D * FF; // the norms' 2·D weights move with the norms, not the tensor cores
  const attention = 2 * rows * seq * seq * Q;
  // the two RMSNorms, and Qwen3's per-head norms of q and k (the same 8 kernels each, over Q and K)
  const norms = shape.qkNorm ? { kernels: 4 * 8, bytes: 36 * (2 * D + Q + K) } : { kernels: 2 * 8, bytes: 2 * 36 * D };
  const products = 4 + 3;
  const rotary = { kernels: 2 * 5, bytes: 20 * (Q + K) };
  const gqa = KV === H ? { kernels: 0, bytes: 0 } : { kernels: 2, bytes: 2 * (2 * K + 2 * Q) };
  const layout = { kernels: 4, bytes: 16 * Q };
  const residual = { kernels: 2, bytes: 12 * D };
  const swiglu = { kernels: 2, bytes: 10 * FF };
  const elementwise = [norms, rotary, gqa, layout, residual, swiglu];
  const kernels = products + 1 + elementwise.reduce((n, x) => n + x.kernels, 0);
  const bytes = elementwise.reduce((n, x) => n + x.bytes, 0) * tokens;
  if (pass === 'forward') return { kernels, flops: 2 * params * tokens + attention, bytes };
  return { kernels: Math.round(2.5 * kernels), flops: 4 * params * tokens + 2.5 * attention, bytes: 2 * bytes };
}

/** Token and position embeddings: a gather and an add forward; backward scatters into a dense V x D
 *  gradient (and T x D), which it first zeroes. */
export function embeddingWork(dim: number, seq: number, vocab: number, rows: number, pass: 'forward' | 'backward'): Work {
  const tokens = rows * seq;
  if (pass === 'forward') return { kernels: 3, flops: 0, bytes: 3 * dim * tokens * BF16 };
  return { kernels: 5, flops: 0, bytes: (4 * dim * tokens + 2 * (vocab + seq) * dim) * BF16 };
}

/** ln_f, the LM head (x @ W^T, V x D, no bias) and cross-entropy in fp32: the logits are cast, normalized
 *  and read again, four fp32 passes over B·T·V each way. */
export function headWork(dim: number, vocab: number, tokens: number, pass: 'forward' | 'backward'): Work {
  const logits = tokens * vocab;
  if (pass === 'forward') return { kernels: 5, flops: 2 * vocab * dim * tokens, bytes: 2 * dim * tokens * BF16 + logits * (BF16 + 4 * 4) };
  return { kernels: 7, flops: 4 * vocab * dim * tokens, bytes: 4 * dim * tokens * BF16 + logits * (BF16 + 4 * 4) };
}

/** One Linear layer of an MLP on `rows` rows, with the GELU that follows it (not after the last layer) and,
 *  for the last, softmax cross-entropy. */
export function linearWork(inputs: number, outputs: number, rows: number, last: boolean, pass: 'forward' | 'backward'): Work {
  const activation = rows * outputs * BF16;
  if (pass === 'forward') return { kernels: last ? 3 : 2, flops: 2 * inputs * outputs * rows, bytes: (last ? 4 : 2) * activation };
  return { kernels: last ? 5 : 4, flops: 4 * inputs * outputs * rows, bytes: (last ? 6 : 4) * activation };
}

/** Fused Adam over `params` parameters: fp32 master, m and v read and written, the gradient read, and (mixed
 *  precision) the 16-bit working copy written: 24 + gradient + copy bytes per parameter, a few launches. */
export function adamWork(params: number, gradBytes: number, copyBytes: number): Work {
  return { kernels: 3, flops: 0, bytes: params * (24 + gradBytes + copyBytes) };
}
