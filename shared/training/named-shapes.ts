// Real models' shapes by name (--model llama2-7b), as the model seam builds them.

/** Real models' shapes as our GPT block (same width, depth, heads, sequence and vocabulary): [L, D, H, T, V].
 *  A Llama block (SwiGLU, RMSNorm, rotary) has about the same parameters and computes ~25% slower. */
export const NAMED_SHAPES: Record<string, number[]> = {
  'gpt2-xl': [48, 1600, 25, 1024, 50257],
  'llama2-7b': [32, 4096, 32, 4096, 32000],
  'llama3-8b': [32, 4096, 32, 8192, 128256],
  'llama2-13b': [40, 5120, 40, 4096, 32000],
  'llama2-70b': [80, 8192, 64, 4096, 32000],
};
