// A GPT-style pre-LN decoder, laid out and named as its PyTorch twin (test/fixtures/gpt_tiny_adam.safetensors):
// token and position embeddings; per block x += attn.proj(causal_mha(attn.qkv(ln_1(x)))) and
// x += mlp.proj(gelu(mlp.fc(ln_2(x)))); then ln_f and an untied head without bias. Linear weights are
// (out, in) as torch.nn.Linear, embeddings (rows, D). The units are the embeddings, each block, and ln_f + head:
// what ZeRO-3 gathers one at a time, as FSDP wraps each Transformer block.
import type { NamedTensor, ParamGroup } from './param-group.js';
import { Rng } from './rng.js';

export interface GptShape {
  layers: number; // blocks
  dim: number; // D
  heads: number; // H (D/H per head)
  seq: number; // T, the context length
  vocab: number; // V
}

/** A unit of the GPT: its tensors, in the order they lie in the flat vector. */
export interface GptGroup extends ParamGroup {
  kind: 'embeddings' | 'block' | 'head';
  block: number; // the block's index, for kind 'block'
  tensors: NamedTensor[];
}

const BLOCK_TENSORS = (D: number): [string, number[]][] => [
  ['ln_1.weight', [D]],
  ['ln_1.bias', [D]],
  ['attn.qkv.weight', [3 * D, D]],
  ['attn.qkv.bias', [3 * D]],
  ['attn.proj.weight', [D, D]],
  ['attn.proj.bias', [D]],
  ['ln_2.weight', [D]],
  ['ln_2.bias', [D]],
  ['mlp.fc.weight', [4 * D, D]],
  ['mlp.fc.bias', [4 * D]],
  ['mlp.proj.weight', [D, 4 * D]],
  ['mlp.proj.bias', [D]],
];

export class GptSpec {
  readonly kind = 'gpt' as const;
  readonly layers: GptGroup[];
  readonly params: number;

  constructor(readonly shape: GptShape) {
    const { layers: L, dim: D, heads: H, seq: T, vocab: V } = shape;
    for (const [k, v] of Object.entries(shape)) if (!Number.isInteger(v) || v < 1) throw new Error(`gpt: ${k} must be a positive integer, got ${v}`);
    if (D % H !== 0) throw new Error(`gpt: width ${D} does not divide into ${H} heads`);
    let offset = 0;
    const group = (kind: GptGroup['kind'], block: number, prefix: string, specs: [string, number[]][]): GptGroup => {
      const start = offset;
      const tensors = specs.map(([name, shape]) => {
        const t = { name: `${prefix}${name}`, offset, shape };
        offset += shape.reduce((a, b) => a * b, 1);
        return t;
      });
      return { index: 0, kind, block, offset: start, size: offset - start, tensors };
    };
    this.layers = [
      group('embeddings', -1, '', [
        ['tok_emb.weight', [V, D]],
        ['pos_emb.weight', [T, D]],
      ]),
      ...Array.from({ length: L }, (_, i) => group('block', i, `h.${i}.`, BLOCK_TENSORS(D))),
      group('head', -1, '', [
        ['ln_f.weight', [D]],
        ['ln_f.bias', [D]],
        ['head.weight', [V, D]],
      ]),
    ].map((g, index) => ({ ...g, index }));
    this.params = offset;
  }

  /** Every tensor with its torch name, offset and shape. */
  tensors(): NamedTensor[] {
    return this.layers.flatMap((g) => g.tensors);
  }

  describe(): string {
    const { layers, dim, heads, seq, vocab } = this.shape;
    return `gpt:${layers},${dim},${heads},${seq},${vocab}`;
  }

  /** GPT-2's init: weights and embeddings N(0, 0.02), biases 0, LayerNorm weight 1 and bias 0. */
  init(seed: number): Float32Array {
    const rng = new Rng(seed);
    const theta = new Float32Array(this.params);
    for (const t of this.tensors()) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      const view = theta.subarray(t.offset, t.offset + n);
      if (/ln_.*\.weight$/.test(t.name)) view.fill(1);
      else if (t.shape.length === 2) for (let i = 0; i < n; i++) view[i] = 0.02 * rng.normal();
    }
    return theta;
  }

  /** Bytes of activations the forward pass keeps for the backward pass, for `rows` sequences of `seq`
   *  tokens: the embeddings' output; per block both LayerNorms' outputs and statistics, q/k/v, the attention
   *  probabilities (H·T·T per sequence), the heads' output, the residual between the halves, the MLP's pre-
   *  and post-GELU activations and the block's output; the head's LayerNorm and the logits. What Gpt
   *  allocates as activations, exactly. With `recompute` (activation checkpointing per block) only each
   *  block's output is kept, and one block's insides exist at a time, recomputed in the backward pass. */
  activationBytes(rows: number, recompute = false): number {
    const { layers: L, dim: D, heads: H, seq: T, vocab: V } = this.shape;
    const N = rows * T;
    // ln_1 out, q/k/v, heads' output, residual, ln_2 out (7D); MLP pre/post GELU (8D); stats; P
    const inside = 15 * N * D + 4 * N + rows * H * T * T;
    const head = N * D + 2 * N + N * V;
    return 4 * (N * D + L * N * D + (recompute ? inside : L * inside) + head);
  }
}
