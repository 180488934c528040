// A Llama-style decoder, laid out and named as Hugging Face's LlamaForCausalLM state dict: token embeddings;
// per block x += o_proj(attn(rope(q_proj(n)), rope(k_proj(n)), v_proj(n))) with n = input_layernorm(x), then
// x += down_proj(silu(gate_proj(m)) * up_proj(m)) with m = post_attention_layernorm(x); then model.norm and an
// untied lm_head. RMSNorm (eps 1e-6, in fp32), rotary embeddings on q and k (half-split, theta 10000),
// grouped-query attention (KV_HEADS key/value heads, each shared by HEADS/KV_HEADS query heads), no biases.
// Linear weights are (out, in) as torch.nn.Linear. The units are the embeddings, each block, and norm + head.
import { decoderUnits, DecoderUnits, type DecoderGroup } from '../../training/decoder.js';
import type { Adaptation } from '../../training/adapters.js';

export interface LlamaShape {
  layers: number; // blocks
  dim: number; // D
  heads: number; // H query heads, D/H wide each
  kvHeads: number; // KV key/value heads
  ff: number; // the SwiGLU MLP's width
  seq: number; // T, the context length
  vocab: number; // V
}

/** Hugging Face's LlamaConfig defaults: RMSNorm's epsilon and the rotary base (--rms-eps, --rope-theta). */
export const RMS_EPS = 1e-6;
export const ROPE_THETA = 10000;

/** What the passes need beyond the shape. */
export interface LlamaOptions {
  ropeTheta: number;
  rmsEps: number;
  qkvBias: boolean; // q, k and v with biases (Qwen2)
  tied: boolean; // the head is the token embeddings (tie_word_embeddings): no lm_head.weight of its own
}

/** What one block keeps for its backward pass (llama-compute.ts); `out` is its output, the next unit's input. */
export const LLAMA_BLOCK = ['n1', 'r1', 'q', 'k', 'v', 'P', 'y', 'xmid', 'n2', 'r2', 'gate', 'up', 'h', 'out'] as const;
export type LlamaBlockName = (typeof LLAMA_BLOCK)[number];

export type LlamaGroup = DecoderGroup;

const BLOCK_TENSORS = (D: number, K: number, FF: number, qkvBias: boolean): [string, number[]][] => [
  ['input_layernorm.weight', [D]],
  ['self_attn.q_proj.weight', [D, D]],
  ...(qkvBias ? [['self_attn.q_proj.bias', [D]] as [string, number[]]] : []),
  ['self_attn.k_proj.weight', [K, D]],
  ...(qkvBias ? [['self_attn.k_proj.bias', [K]] as [string, number[]]] : []),
  ['self_attn.v_proj.weight', [K, D]],
  ...(qkvBias ? [['self_attn.v_proj.bias', [K]] as [string, number[]]] : []),
  ['self_attn.o_proj.weight', [D, D]],
  ['post_attention_layernorm.weight', [D]],
  ['mlp.gate_proj.weight', [FF, D]],
  ['mlp.up_proj.weight', [FF, D]],
  ['mlp.down_proj.weight', [D, FF]],
];

/** Why a shape cannot be a Llama block, or null. */
export function llamaShapeProblem(s: LlamaShape): string | null {
  for (const [k, v] of Object.entries(s)) if (!Number.isInteger(v) || v < 1) return `${k} must be a positive integer, got ${v}`;
  if (s.dim % s.heads !== 0) return `DIM ${s.dim} does not divide into ${s.heads} heads`;
  if (s.heads % s.kvHeads !== 0) return `HEADS ${s.heads} is not a multiple of KV_HEADS ${s.kvHeads}`;
  if ((s.dim / s.heads) % 2 !== 0) return `the head width ${s.dim / s.heads} is odd: rotary embeddings rotate pairs`;
  return null;
}

/** The Llama's units from its shape, checked. */
function llamaUnits(shape: LlamaShape, o: Pick<LlamaOptions, 'qkvBias' | 'tied'>): ReturnType<typeof decoderUnits> {
  const problem = llamaShapeProblem(shape);
  if (problem) throw new Error(`llama: ${problem}`);
  const { layers: L, dim: D, heads: H, kvHeads: KV, ff: FF, vocab: V } = shape;
  const K = KV * (D / H);
  const head: [string, number[]][] = [['model.norm.weight', [D]], ...(o.tied ? [] : [['lm_head.weight', [V, D]] as [string, number[]]])];
  return decoderUnits([['model.embed_tokens.weight', [V, D]]], L, (i) => `model.layers.${i}.`, BLOCK_TENSORS(D, K, FF, o.qkvBias), head);
}

export class LlamaSpec extends DecoderUnits {
  readonly kind: string = 'llama'; // a model built on it (phi3/) has its own
  declare readonly layers: LlamaGroup[];
  readonly ropeTheta: number;
  readonly rmsEps: number;
  readonly qkvBias: boolean;
  readonly tied: boolean;

  constructor(
    readonly shape: LlamaShape,
    opts: Partial<LlamaOptions> = {},
    adapt?: Adaptation,
  ) {
    const [qkvBias, tied] = [opts.qkvBias ?? false, opts.tied ?? false];
    super(llamaUnits(shape, { qkvBias, tied }), adapt, tied ? 'lm_head.weight' : undefined);
    this.ropeTheta = opts.ropeTheta ?? ROPE_THETA;
    this.rmsEps = opts.rmsEps ?? RMS_EPS;
    [this.qkvBias, this.tied] = [qkvBias, tied];
  }

  describe(): string {
    const { layers, dim, heads, kvHeads, ff, seq, vocab } = this.shape;
    const options = [
      ...(this.ropeTheta === ROPE_THETA && this.rmsEps === RMS_EPS ? [] : [`rope theta ${this.ropeTheta}, rms eps ${this.rmsEps}`]),
      ...(this.qkvBias ? ['q/k/v biases'] : []),
      ...(this.tied ? ['tied embeddings'] : []),
    ];
    return `llama:${layers},${dim},${heads},${kvHeads},${ff},${seq},${vocab}${options.length ? ` (${options.join(', ')})` : ''}`;
  }

  /** HF's init (initializer_range 0.02): Linear weights and embeddings N(0, 0.02), RMSNorm weights 1. */
  init(seed: number): Float32Array {
    return this.initFrom(seed, /(layernorm|norm)\.weight$/);
  }

  /** Bytes of activations the forward pass keeps for the backward pass, for `rows` sequences, as Llama
   *  (llama-compute.ts) lays them out: the embeddings' output; per block both norms' outputs and 1/rms, q and
   *  k after rotary, v, the probabilities (H·T·T a sequence), the heads' output, the residual between the
   *  halves, gate, up, their SwiGLU product and the block's output; the final norm and the logits. With
   *  `recompute` only each block's output is kept and one block's insides exist at a time. */
  activationBytes(rows: number, recompute = false): number {
    const { layers: L, dim: D, heads: H, kvHeads: KV, ff: FF, seq: T, vocab: V } = this.shape;
    const K = KV * (D / H);
    const N = rows * T;
    const inside = N * (D + 1) * 2 + N * (3 * D + 2 * K) + rows * H * T * T + N * 3 * FF; // n1, n2 and their 1/rms; q, k, v, y, xmid; P; gate, up, h
    const head = N * (D + 1) + N * V;
    return 4 * (N * D + L * N * D + (recompute ? inside : L * inside) + head) + this.adapterActivationBytes(N, recompute);
  }
}
