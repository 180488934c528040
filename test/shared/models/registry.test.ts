// The registry: every way to write --model gives a configuration whose spec writes it back; a configuration
// that arrives with a wrong field or an unknown model is refused naming it; checkpoints written before
// configurations were named read as the same models.
import { describe, expect, it } from 'vitest';
import { legacyModel, modelSpec, parseModel, tuneModel } from '../../../shared/models/registry.js';
import { NAMED_SHAPES } from '../../../shared/models/named-shapes.js';

describe('the model registry', () => {
  it.each([
    ['64,256,10', '64,256,10'],
    ['gpt:2,64,4,32', 'gpt:2,64,4,32,64'],
    ['GPT:2,64,4,32,100', 'gpt:2,64,4,32,100'],
    ['llama:2,64,4,2,172,32', 'llama:2,64,4,2,172,32,64'],
  ])('--model %s is %s', (text, described) => {
    const config = parseModel(text);
    expect(modelSpec({ model: config }).describe()).toBe(described);
    expect(parseModel(described)).toEqual(config);
  });

  it('every named shape builds, with its own parameter count', () => {
    for (const [name, config] of Object.entries(NAMED_SHAPES))
      expect(modelSpec({ model: parseModel(name) }).params, name).toBe(modelSpec({ model: { ...config } }).params);
    expect(modelSpec({ model: parseModel('llama2-7b') }).params).toBe(6_738_415_616);
  });

  it('refuses what it cannot read, naming the model or the field', () => {
    expect(() => parseModel('resnet:50')).toThrow(/^--model: "resnet:50" must be WIDTHS .*gpt:.*llama:.*named shape: gpt2-xl/);
    expect(() => parseModel('gpt:2,64,4')).toThrow(/gpt:LAYERS,DIM,HEADS,SEQ\[,VOCAB\]/);
    expect(() => modelSpec({ model: { arch: 'resnet' } })).toThrow(/model: "resnet" is not a model zerowire trains \(mlp, gpt, llama, phi3\)/);
    expect(() => modelSpec({ model: { arch: 'gpt', layers: 2, dim: 64, heads: 4.5, seq: 8, vocab: 64 } })).toThrow(/^model\.field "heads"/);
    expect(() => modelSpec({ model: { arch: 'mlp', widths: [4] } })).toThrow(/widths/);
  });

  it('--rope-theta and --rms-eps go to a Llama only', () => {
    expect(tuneModel(parseModel('llama:2,64,4,2,172,32'), { ropeTheta: 5e5, rmsEps: 1e-5 })).toMatchObject({ ropeTheta: 5e5, rmsEps: 1e-5 });
    expect(() => tuneModel(parseModel('gpt:2,64,4,32'), { ropeTheta: 5e5 })).toThrow(/^--rope-theta: only with a Llama model/);
  });

  it("a checkpoint's positional numbers (format 2) read as the same model", () => {
    expect(legacyModel('mlp', [64, 256, 10])).toEqual(parseModel('64,256,10'));
    expect(legacyModel('gpt', [2, 64, 4, 32, 64])).toEqual(parseModel('gpt:2,64,4,32'));
    expect(legacyModel('llama', [32, 4096, 32, 8, 14336, 8192, 128256, 500000, 100000])).toEqual(parseModel('llama3-8b'));
  });
});
