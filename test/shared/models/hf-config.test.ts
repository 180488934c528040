// Hugging Face config.json files read as our models: each model's own parameter count exactly, every key
// accounted for (read, or left aside with the reason), and bad files refused naming the file and the key.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJson } from '../../../shared/io/json-file.js';
import { readHfConfig } from '../../../shared/models/hf-config.js';
import { modelSpec, parseModel } from '../../../shared/models/registry.js';

const FIXTURES = new URL('../../fixtures/hf/', import.meta.url);
const read = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>;
const params = (model: { arch: string }) => modelSpec({ model: { ...model } }).params;

describe('Hugging Face config.json', () => {
  it.each([
    // the counts the models publish (their safetensors index's total, or torch's sum of numel)
    ['llama-2-7b.json', 6_738_415_616],
    ['llama-3-8b.json', 8_030_261_248],
    ['mistral-7b.json', 7_241_732_096],
    ['qwen2-1.5b.json', 1_543_714_304], // tied, q/k/v biases
    ['qwen2-7b.json', 7_615_616_512], // q/k/v biases
    ['gpt2.json', 124_439_808], // tied
    ['phi-3-mini-4k.json', 3_821_079_552], // fused q/k/v and gate/up
    ['qwen3-8b.json', 8_190_735_360], // q/k norms per head
    ['qwen3-0.6b.json', 596_049_920], // q/k norms, heads of 128 where 1024 / 16 is 64, tied
  ])('%s has its own parameter count, %d', (file, count) => {
    const r = readHfConfig(read(file), file);
    expect(params(r.model)).toBe(count);
    const keys = Object.keys(read(file));
    for (const key of keys)
      expect(
        r.rows.some((row) => row.key === key),
        key,
      ).toBe(true); // every key accounted for
  });

  it('named shapes are the same files read the same way, GPT-2 XL and Qwen2-1.5B tied', () => {
    expect(params(parseModel('gpt2-xl'))).toBe(1_557_611_200);
    expect(params(parseModel('qwen2-1.5b'))).toBe(1_543_714_304);
    expect(params(parseModel('llama2-7b'))).toBe(6_738_415_616);
    expect(parseModel('llama3-8b')).toEqual({ ...readHfConfig(read('llama-3-8b.json'), 'f', 8192).model });
    expect(parseModel('qwen3-8b')).toEqual({ ...readHfConfig(read('qwen3-8b.json'), 'f').model });
    expect(params(parseModel('qwen3-8b'))).toBe(8_190_735_360);
  });

  it('the sequence: the context capped with a note, or --seq', () => {
    const r = readHfConfig(read('qwen2-7b.json'), 'f');
    expect(r.model).toMatchObject({ seq: 4096 });
    expect(r.notes).toEqual(["sequence 4096: the model's context of 131072 capped (--seq N to train at another length)"]);
    expect(readHfConfig(read('qwen2-7b.json'), 'f', 1024).model).toMatchObject({ seq: 1024 });
    expect(readHfConfig(read('gpt2.json'), 'f').model).toMatchObject({ seq: 1024, tied: true });
  });

  it('keys left aside say why; unknown keys are named, never silent', () => {
    const rows = readHfConfig({ ...read('mistral-7b.json'), flux_capacitor: 1 }, 'f').rows;
    expect(rows.find((r) => r.key === 'flux_capacitor')?.became).toBe('left aside: not understood');
    expect(rows.find((r) => r.key === 'sliding_window')?.became).toMatch(/^left aside: attention over the whole sequence/);
    expect(rows.find((r) => r.key === 'torch_dtype')?.became).toBe('left aside: no bearing on a training step');
    expect(rows.find((r) => r.key === 'num_key_value_heads')?.became).toBe('kvHeads');
  });

  it('refuses what it cannot read, naming the file and the key', () => {
    const bad = (o: Record<string, unknown>) => () => readHfConfig({ ...read('llama-2-7b.json'), ...o }, 'x/config.json');
    expect(bad({ architectures: ['T5ForConditionalGeneration'] })).toThrow(
      /^x\/config.json: architecture T5ForConditionalGeneration is not read \(zerowire reads LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Phi3ForCausalLM, GPT2LMHeadModel\)$/,
    );
    expect(bad({ hidden_size: '4096' })).toThrow(/^x\/config.json: key "hidden_size": expected a positive integer, got "4096"$/);
    expect(bad({ num_hidden_layers: undefined })).toThrow(/^x\/config.json: key "num_hidden_layers" is missing$/);
    expect(bad({ tie_word_embeddings: 'yes' })).toThrow(/key "tie_word_embeddings": expected true or false/);
    expect(bad({ hidden_act: 'gelu' })).toThrow(/key "hidden_act": only silu/);
    expect(bad({ head_dim: 65 })).toThrow(/^x\/config.json: key "head_dim": each head's width must be an even whole number for rotary embeddings, got 65$/);
    expect(() => readHfConfig([], 'x')).toThrow(/^x: expected a JSON object/);
  });

  it('Phi-3: a phi3 model, its fused tensors under their own names; what it cannot say is refused', () => {
    const r = readHfConfig(read('phi-3-mini-4k.json'), 'f');
    expect(r.model).toMatchObject({ arch: 'phi3', layers: 32, dim: 3072, heads: 32, kvHeads: 32, ff: 8192, seq: 4096, vocab: 32064, rmsEps: 1e-5 });
    const names = modelSpec({ model: { ...r.model } })
      .tensors()
      .map((t) => t.name);
    expect(names).toContain('model.layers.0.self_attn.qkv_proj.weight');
    expect(names).toContain('model.layers.0.mlp.gate_up_proj.weight');
    const bad = (o: Record<string, unknown>) => () => readHfConfig({ ...read('phi-3-mini-4k.json'), ...o }, 'p/config.json');
    expect(bad({ partial_rotary_factor: 0.75 })).toThrow(/^p\/config.json: key "partial_rotary_factor": rotary on part of each head is not read/);
    expect(bad({ tie_word_embeddings: true })).toThrow(/key "tie_word_embeddings": true is not read for Phi3ForCausalLM/);
  });

  it('a file that is missing or not JSON: one line with the line and column', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-hf-'));
    try {
      writeFileSync(join(dir, 'config.json'), '{\n  "hidden_size": 4096,\n  "vocab_size": ,\n}');
      expect(() => readJson(join(dir, 'config.json'), '--hf-config')).toThrow(
        /^--hf-config .*config.json: not JSON \(line 3, column 17: Unexpected token ','\)$/,
      );
      writeFileSync(join(dir, 'config.json'), '{"a": 1,}');
      expect(() => readJson(join(dir, 'config.json'), '--hf-config')).toThrow(/not JSON \(line 1, column 9: Expected double-quoted property name\)$/);
      expect(() => readJson(join(dir, 'nope.json'), '--hf-config')).toThrow(/^--hf-config .*nope.json: no such file$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
