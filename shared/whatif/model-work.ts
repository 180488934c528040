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
