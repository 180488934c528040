// A Llama-style decoder, laid out and named as Hugging Face's LlamaForCausalLM state dict: token embeddings;
// per block x += o_proj(attn(rope(q_proj(n)), rope(k_proj(n)), v_proj(n))) with n = input_layernorm(x), then
// x += down_proj(silu(gate_proj(m)) * up_proj(m)) with m = post_attention_layernorm(x); then model.norm and an
// untied lm_head. RMSNorm (eps 1e-6, in fp32), rotary embeddings on q and k (half-split, theta 10000),
// grouped-query attention (KV_HEADS key/value heads, each shared by HEADS/KV_HEADS query heads), no biases.
// Linear weights are (out, in) as torch.nn.Linear. The units are the embeddings, each block, and norm + head.
// Options a config.json can set: Qwen2's q/k/v biases, a tied head, and Qwen3's per-head q_norm and k_norm
// (RMSNorm over each head of q and k, before rotary) with heads of head_dim, which need not be DIM/HEADS.
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
  headDim: number; // each attention head's width (head_dim; DIM/HEADS unless a config says otherwise, as Qwen3's)
  qkNorm: boolean; // q and k each RMSNorm-ed per head before rotary (Qwen3's q_norm and k_norm)
}

/** What one block keeps for its backward pass (llama-compute.ts); `out` is its output, the next unit's input.
 *  q0, k0, rq, rk: q and k before their per-head norms and 1/rms (empty without qkNorm). */
export const LLAMA_BLOCK = ['n1', 'r1', 'q0', 'rq', 'k0', 'rk', 'q', 'k', 'v', 'P', 'y', 'xmid', 'n2', 'r2', 'gate', 'up', 'h', 'out'] as const;
export type LlamaBlockName = (typeof LLAMA_BLOCK)[number];

export type LlamaGroup = DecoderGroup;

/** A block's tensors: Q = HEADS·head width (the query and output width), K = KV_HEADS·head width. */
const BLOCK_TENSORS = (D: number, Q: number, K: number, FF: number, o: Pick<LlamaOptions, 'qkvBias' | 'qkNorm' | 'headDim'>): [string, number[]][] => [
  ['input_layernorm.weight', [D]],
  ['self_attn.q_proj.weight', [Q, D]],
  ...(o.qkvBias ? [['self_attn.q_proj.bias', [Q]] as [string, number[]]] : []),
  ['self_attn.k_proj.weight', [K, D]],
  ...(o.qkvBias ? [['self_attn.k_proj.bias', [K]] as [string, number[]]] : []),
  ['self_attn.v_proj.weight', [K, D]],
  ...(o.qkvBias ? [['self_attn.v_proj.bias', [K]] as [string, number[]]] : []),
  ['self_attn.o_proj.weight', [D, Q]],
  ...(o.qkNorm ? [['self_attn.q_norm.weight', [o.headDim]] as [string, number[]], ['self_attn.k_norm.weight', [o.headDim]] as [string, number[]]] : []),
  ['post_attention_layernorm.weight', [D]],
  ['mlp.gate_proj.weight', [FF, D]],
  ['mlp.up_proj.weight', [FF, D]],
  ['mlp.down_proj.weight', [D, FF]],
];

/** Why a shape cannot be a Llama block, or null; `headDim`: a head width of its own (else DIM/HEADS). */
export function llamaShapeProblem(s: LlamaShape, headDim?: number): string | null {
  for (const [k, v] of Object.entries(s)) if (!Number.isInteger(v) || v < 1) return `${k} must be a positive integer, got ${v}`;
  if (headDim === undefined && s.dim % s.heads !== 0) return `DIM ${s.dim} does not divide into ${s.heads} heads`;
  if (s.heads % s.kvHeads !== 0) return `HEADS ${s.heads} is not a multiple of KV_HEADS ${s.kvHeads}`;
  const hd = headDim ?? s.dim / s.heads;
  if (!Number.isInteger(hd) || hd < 1) return `the head width must be a positive integer, got ${hd}`;
  if (hd % 2 !== 0) return `the head width ${hd} is odd: rotary embeddings rotate pairs`;
  return null;
}

/** The widths of a block's attention: each head's, the queries' (HEADS heads) and the keys' (KV_HEADS). */
function attentionWidths(shape: LlamaShape, headDim: number): { hd: number; Q: number; K: number } {
  return { hd: headDim, Q: shape.heads * headDim, K: shape.kvHeads * headDim };
}

/** The Llama's units from its shape, checked. */
function llamaUnits(shape: LlamaShape, o: Pick<LlamaOptions, 'qkvBias' | 'tied' | 'qkNorm' | 'headDim'>): ReturnType<typeof decoderUnits> {
  const problem = llamaShapeProblem(shape, o.headDim);
  if (problem) throw new Error(`llama: ${problem}`);
  const { layers: L, dim: D, ff: FF, vocab: V } = shape;
  const { Q, K } = attentionWidths(shape, o.headDim);
  const head: [string, number[]][] = [['model.norm.weight', [D]], ...(o.tied ? [] : [['lm_head.weight', [V, D]] as [string, number[]]])];
  return decoderUnits([['model.embed_tokens.weight', [V, D]]], L, (i) => `model.layers.${i}.`, BLOCK_TENSORS(D, Q, K, FF, o), head);
}

export class LlamaSpec extends DecoderUnits {
  readonly kind: string = 'llama'; // a model built on it (phi3/) has its own
  declare readonly layers: LlamaGroup[];
  readonly ropeTheta: number;
  readonly rmsEps: number;
  readonly qkvBias: boolean;
  readonly tied: boolean;
  readonly headDim: number;
  readonly qkNorm: boolean;

  constructor(
    readonly shape: LlamaShape,
    opts: Partial<LlamaOptions> = {},
    adapt?: Adaptation,
  ) {
    const [qkvBias, tied, qkNorm] = [opts.qkvBias ?? false, opts.tied ?? false, opts.qkNorm ?? false];
    const headDim = opts.headDim ?? shape.dim / shape.heads;
    super(llamaUnits(shape, { qkvBias, tied, qkNorm, headDim }), adapt, tied ? 'lm_head.weight' : undefined);
    this.ropeTheta = opts.ropeTheta ?? ROPE_THETA;
    this.rmsEps = opts.rmsEps ?? RMS_EPS;
    [this.qkvBias, this.tied, this.headDim, this.qkNorm] = [qkvBias, tied, headDim, qkNorm];
  }

  /** Each head's width, the queries' and the keys' (attentionWidths). */
  get widths(): { hd: number; Q: number; K: number } {
    return attentionWidths(this.shape, this.headDim);
  }

  describe(): string {
    const { layers, dim, heads, kvHeads, ff, seq, vocab } = this.shape;
    const options = [
      ...(this.ropeTheta === ROPE_THETA && this.rmsEps === RMS_EPS ? [] : [`rope theta ${this.ropeTheta}, rms eps ${this.rmsEps}`]),
      ...(this.qkvBias ? ['q/k/v biases'] : []),
      ...(this.tied ? ['tied embeddings'] : []),
      ...(this.headDim !== dim / heads ? [`head width ${this.headDim}`] : []),
      ...(this.qkNorm ? ['q/k norms'] : []),
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
    const { Q, K } = this.widths;
    const N = rows * T;
    const norms = this.qkNorm ? N * (Q + K + H + KV) : 0; // q0, k0 and their per-head 1/rms
    const inside = N * (D + 1) * 2 + N * (2 * Q + D + 2 * K) + norms + rows * H * T * T + N * 3 * FF; // n1, n2 and their 1/rms; q, y, xmid, k, v; P; gate, up, h
    const head = N * (D + 1) + N * V;
    return 4 * (N * D + L * N * D + (recompute ? inside : L * inside) + head) + this.adapterActivationBytes(N, recompute);
  }
}
