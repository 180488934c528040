// Real models by name (--model llama3-8b): each its Hugging Face config.json as published (the keys that
// shape a training step), read by the same reader as --hf-config (hf-config.ts), so a named shape and the
// model's own file give the same model and the model's own parameter count. `seq`: the sequence these models
// are commonly trained and fine-tuned at (the reader's default is the context, capped).
import { readHfConfig } from './hf-config.js';

interface Published {
  source: string; // where its config.json was published
  seq: number;
  config: Record<string, unknown>;
}

const llama = (o: Record<string, unknown>) => ({ architectures: ['LlamaForCausalLM'], hidden_act: 'silu', tie_word_embeddings: false, ...o });

const PUBLISHED: Record<string, Published> = {
  'gpt2-xl': {
    source: 'https://huggingface.co/openai-community/gpt2-xl/blob/main/config.json',
    seq: 1024,
    config: { architectures: ['GPT2LMHeadModel'], n_layer: 48, n_embd: 1600, n_head: 25, n_positions: 1024, n_ctx: 1024, vocab_size: 50257 },
  },
  'llama2-7b': {
    source: 'https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json',
    seq: 4096,
    config: llama({
      num_hidden_layers: 32,
      hidden_size: 4096,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      intermediate_size: 11008,
      max_position_embeddings: 4096,
      vocab_size: 32000,
      rms_norm_eps: 1e-5,
    }),
  },
  'llama2-13b': {
    source: 'https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json',
    seq: 4096,
    config: llama({
      num_hidden_layers: 40,
      hidden_size: 5120,
      num_attention_heads: 40,
      num_key_value_heads: 40,
      intermediate_size: 13824,
      max_position_embeddings: 4096,
      vocab_size: 32000,
      rms_norm_eps: 1e-5,
    }),
  },
  'llama2-70b': {
    source: 'https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json',
    seq: 4096,
    config: llama({
      num_hidden_layers: 80,
      hidden_size: 8192,
      num_attention_heads: 64,
      num_key_value_heads: 8,
      intermediate_size: 28672,
      max_position_embeddings: 4096,
      vocab_size: 32000,
      rms_norm_eps: 1e-5,
    }),
  },
  'llama3-8b': {
    source: 'https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json',
    seq: 8192,
    config: llama({
      num_hidden_layers: 32,
      hidden_size: 4096,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      intermediate_size: 14336,
      max_position_embeddings: 8192,
      vocab_size: 128256,
      rms_norm_eps: 1e-5,
      rope_theta: 500000,
    }),
  },
  'llama3-70b': {
    source: 'https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json',
    seq: 8192,
    config: llama({
      num_hidden_layers: 80,
      hidden_size: 8192,
      num_attention_heads: 64,
      num_key_value_heads: 8,
      intermediate_size: 28672,
      max_position_embeddings: 8192,
      vocab_size: 128256,
      rms_norm_eps: 1e-5,
      rope_theta: 500000,
    }),
  },
  'mistral-7b': {
    source: 'https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json',
    seq: 8192,
    config: {
      ...llama({
        num_hidden_layers: 32,
        hidden_size: 4096,
        num_attention_heads: 32,
        num_key_value_heads: 8,
        intermediate_size: 14336,
        max_position_embeddings: 32768,
        vocab_size: 32000,
        rms_norm_eps: 1e-5,
      }),
      architectures: ['MistralForCausalLM'],
      sliding_window: 4096,
    },
  },
  'qwen2-1.5b': {
    source: 'https://huggingface.co/Qwen/Qwen2-1.5B/blob/main/config.json',
    seq: 4096,
    config: {
      architectures: ['Qwen2ForCausalLM'],
      ...{ hidden_act: 'silu', num_hidden_layers: 28, hidden_size: 1536, num_attention_heads: 12, num_key_value_heads: 2, intermediate_size: 8960 },
      ...{ max_position_embeddings: 131072, vocab_size: 151936, rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true },
    },
  },
  'qwen2.5-7b': {
    source: 'https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json',
    seq: 4096,
    config: {
      architectures: ['Qwen2ForCausalLM'],
      ...{ hidden_act: 'silu', num_hidden_layers: 28, hidden_size: 3584, num_attention_heads: 28, num_key_value_heads: 4, intermediate_size: 18944 },
      ...{ max_position_embeddings: 131072, vocab_size: 152064, rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: false },
    },
  },
  'qwen3-8b': {
    source: 'https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json',
    seq: 4096,
    config: {
      architectures: ['Qwen3ForCausalLM'],
      ...{ hidden_act: 'silu', num_hidden_layers: 36, hidden_size: 4096, num_attention_heads: 32, num_key_value_heads: 8, head_dim: 128 },
      ...{ intermediate_size: 12288, max_position_embeddings: 40960, vocab_size: 151936, rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: false },
    },
  },
};

/** Every named shape's model, read from its published config.json. */
export const NAMED_SHAPES = Object.fromEntries(
  Object.entries(PUBLISHED).map(([name, p]) => [name, readHfConfig(p.config, `named shape ${name}`, p.seq).model]),
);
