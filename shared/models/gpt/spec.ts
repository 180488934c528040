// A GPT-style pre-LN decoder, laid out and named as its PyTorch twin (test/fixtures/gpt_tiny_adam.safetensors):
// token and position embeddings; per block x += attn.proj(causal_mha(attn.qkv(ln_1(x)))) and
// x += mlp.proj(gelu(mlp.fc(ln_2(x)))); then ln_f and a head without bias (its own, or tied to tok_emb). Linear weights are
// (out, in) as torch.nn.Linear, embeddings (rows, D). The units are the embeddings, each block, and ln_f + head:
// what ZeRO-3 gathers one at a time, as FSDP wraps each Transformer block.
import { decoderUnits, DecoderUnits, type DecoderGroup } from '../../training/decoder.js';
import type { Adaptation } from '../../training/adapters.js';

export interface GptShape {
  layers: number; // blocks
  dim: number; // D
  heads: number; // H (D/H per head)
  seq: number; // T, the context length
  vocab: number; // V
}

/** A unit of the GPT: its tensors, in the order they lie in the flat vector. */
export type GptGroup = DecoderGroup;

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

/** The GPT's units from its shape, checked. */
function gptUnits(shape: GptShape, tied: boolean): ReturnType<typeof decoderUnits> {
  const { layers: L, dim: D, heads: H, seq: T, vocab: V } = shape;
  for (const [k, v] of Object.entries(shape)) if (!Number.isInteger(v) || v < 1) throw new Error(`gpt: ${k} must be a positive integer, got ${v}`);
  if (D % H !== 0) throw new Error(`gpt: width ${D} does not divide into ${H} heads`);
  return decoderUnits(
    [
      ['tok_emb.weight', [V, D]],
      ['pos_emb.weight', [T, D]],
    ],
    L,
    (i) => `h.${i}.`,
    BLOCK_TENSORS(D),
    [['ln_f.weight', [D]], ['ln_f.bias', [D]], ...(tied ? [] : [['head.weight', [V, D]] as [string, number[]]])],
  );
}

export class GptSpec extends DecoderUnits {
  readonly kind = 'gpt' as const;
  declare readonly layers: GptGroup[];

  /** `tied`: the head is the token embeddings (GPT-2's tie_word_embeddings): no head.weight of its own. */
  constructor(
    readonly shape: GptShape,
    adapt?: Adaptation,
    readonly tied = false,
  ) {
    super(gptUnits(shape, tied), adapt, tied ? 'head.weight' : undefined);
  }

  describe(): string {
    const { layers, dim, heads, seq, vocab } = this.shape;
    return `gpt:${layers},${dim},${heads},${seq},${vocab}${this.tied ? ' (tied embeddings)' : ''}`;
  }

  /** GPT-2's init: weights and embeddings N(0, 0.02), biases 0, LayerNorm weight 1 and bias 0. */
  init(seed: number): Float32Array {
    return this.initFrom(seed, /ln_.*\.weight$/);
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
    return 4 * (N * D + L * N * D + (recompute ? inside : L * inside) + head) + this.adapterActivationBytes(N, recompute);
  }
}
