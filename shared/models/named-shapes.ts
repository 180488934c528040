// Real models' shapes by name (--model llama2-7b), as the registry builds them: the Llama family as Llama
// blocks with their real depth, width, heads, key/value heads, SwiGLU width, sequence and vocabulary; GPT-2 XL
// as our GPT block. Sources: each model's Hugging Face config.json.
import type { GptConfig } from './gpt/entry.js';
import type { LlamaConfig } from './llama/entry.js';

/** T: a sequence these models are commonly trained and fine-tuned at. */
const llama = (
  layers: number,
  dim: number,
  heads: number,
  kvHeads: number,
  ff: number,
  seq: number,
  vocab: number,
  ropeTheta: number,
  rmsEps: number,
): LlamaConfig => ({
  arch: 'llama',
  ...{ layers, dim, heads, kvHeads, ff, seq, vocab, ropeTheta, rmsEps },
});

export const NAMED_SHAPES: Readonly<Record<string, GptConfig | LlamaConfig>> = {
  'gpt2-xl': { arch: 'gpt', layers: 48, dim: 1600, heads: 25, seq: 1024, vocab: 50257 },
  'llama2-7b': llama(32, 4096, 32, 32, 11008, 4096, 32000, 1e4, 1e-5),
  'llama2-13b': llama(40, 5120, 40, 40, 13824, 4096, 32000, 1e4, 1e-5),
  'llama2-70b': llama(80, 8192, 64, 8, 28672, 4096, 32000, 1e4, 1e-5),
  'llama3-8b': llama(32, 4096, 32, 8, 14336, 8192, 128256, 5e5, 1e-5),
  'llama3-70b': llama(80, 8192, 64, 8, 28672, 8192, 128256, 5e5, 1e-5),
  'mistral-7b': llama(32, 4096, 32, 8, 14336, 8192, 32000, 1e4, 1e-5),
  // Qwen2.5 adds biases to q, k and v (2·(D + 2K) parameters a block, 0.01% of them): modeled without them.
  'qwen2.5-7b': llama(28, 3584, 28, 4, 18944, 4096, 152064, 1e6, 1e-6),
};
