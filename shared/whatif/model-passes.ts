// Our models as GPU work, layer by layer (the scheme hands compute one parameter group at a time): what each
// group's forward and backward launch on a modeled device, the model's FLOPs, and the activations a GPU
// framework keeps (flash attention: no T x T scores).
import type { GptSpec } from '../training/gpt.js';
import type { LlamaSpec } from '../training/llama.js';
import type { MlpSpec } from '../training/mlp.js';
import type { ModelSpec } from '../training/model.js';
import { adamWork, blockWork, embeddingWork, headWork, linearWork, llamaBlockWork } from './model-work.js';
import { NO_WORK, type Work } from './gpu-cost.js';
import { adaptedWork, adapterActivationBytes } from './adapter-work.js';

/** What the cost model needs of a model: each of its models is an entry (a new model is a new entry). */
interface GpuPasses<S extends ModelSpec> {
  /** Group `layer`'s work on `rows` batch rows (MLP rows, GPT sequences). */
  layerWork(spec: S, layer: number, rows: number, pass: 'forward' | 'backward'): Work;
  /** Whether group `layer` is a checkpointed unit under --recompute. */
  recomputes(spec: S, layer: number): boolean;
  /** Tokens (or rows) in `rows` batch rows. */
  tokens(spec: S, rows: number): number;
  /** Bytes of activations a bf16 GPU framework keeps for the backward pass. */
  activationBytes(spec: S, rows: number, recompute: boolean): number;
}

const MLP: GpuPasses<MlpSpec> = {
  layerWork: (spec, layer, rows, pass) => {
    const l = spec.layers[layer];
    return linearWork(l.inputs, l.outputs, rows, layer === spec.layers.length - 1, pass);
  },
  recomputes: () => false,
  tokens: (_spec, rows) => rows,
  activationBytes: (spec, rows) => spec.layers.reduce((s, l) => s + 2 * 2 * rows * l.outputs, 0), // pre- and post-GELU, bf16
};

const GPT: GpuPasses<GptSpec> = {
  layerWork: (spec, layer, rows, pass) => {
    const g = spec.layers[layer];
    const { dim, seq, vocab } = spec.shape;
    if (g.kind === 'embeddings') return embeddingWork(dim, seq, vocab, rows, pass);
    if (g.kind === 'head') return headWork(dim, vocab, rows * seq, pass);
    return blockWork(dim, seq, rows, pass);
  },
  recomputes: (spec, layer) => spec.layers[layer].kind === 'block',
  tokens: (spec, rows) => rows * spec.shape.seq,
  /** A GPT block keeps 32 bytes per token per unit of width: Korthikanti et al. 2022's 34·s·b·h without its two
   *  dropout masks, and without its 5·a·s²·b of attention scores, which flash attention never stores.
   *  Checkpointed, a block keeps only its input (2·D per token) and one block's insides exist at a time. The
   *  head keeps fp32 logits. */
  activationBytes: (spec, rows, recompute) => {
    const { layers: L, dim: D, seq: T, vocab: V } = spec.shape;
    const tokens = rows * T;
    const block = 32 * D * tokens;
    const blocks = recompute ? L * 2 * D * tokens + block : L * block;
    return 2 * D * tokens + blocks + tokens * (2 * D + 4 * V);
  },
};

const LLAMA: GpuPasses<LlamaSpec> = {
  layerWork: (spec, layer, rows, pass) => {
    const g = spec.layers[layer];
    const { dim, seq, vocab } = spec.shape;
    if (g.kind === 'embeddings') return embeddingWork(dim, seq, vocab, rows, pass);
    if (g.kind === 'head') return headWork(dim, vocab, rows * seq, pass);
    return llamaBlockWork(spec.shape, seq, rows, pass);
  },
  recomputes: (spec, layer) => spec.layers[layer].kind === 'block',
  tokens: (spec, rows) => rows * spec.shape.seq,
  /** Per token a Llama block keeps, in bf16, its input and both norms' outputs, q, k, v, the attention's output,
   *  the residual, and gate, up, SiLU(gate) and their product (the SwiGLU keeps four FF-wide tensors where
   *  GELU's MLP keeps two 4D ones), plus each norm's fp32 input; no T x T scores (flash attention).
   *  Checkpointed, its input only, and one block's insides at a time. The head keeps fp32 logits. */
  activationBytes: (spec, rows, recompute) => {
    const { layers: L, dim: D, heads: H, kvHeads: KV, ff: FF, seq: T, vocab: V } = spec.shape;
    const tokens = rows * T;
    const K = KV * (D / H);
    const block = (2 * (6 * D + 2 * K + 4 * FF) + 2 * 4 * D + 8) * tokens;
    const blocks = recompute ? L * 2 * D * tokens + block : L * block;
    return 2 * D * tokens + blocks + tokens * (2 * D + 4 * V);
  },
};

const PASSES: { [K in ModelSpec['kind']]: GpuPasses<Extract<ModelSpec, { kind: K }>> } = { mlp: MLP, gpt: GPT, llama: LLAMA };

/** The entry of a spec's model (one lookup, no branch). */
const passes = (spec: ModelSpec) => PASSES[spec.kind] as GpuPasses<ModelSpec>;

/** Group `layer`'s work on `rows` batch rows (MLP rows, GPT sequences), as fine-tuning changes it (adapter-work.ts). */
export function layerWork(spec: ModelSpec, layer: number, rows: number, pass: 'forward' | 'backward'): Work {
  const base = passes(spec).layerWork(spec, layer, rows, pass);
  return spec.adapt ? adaptedWork(spec.layers[layer], tokensOf(spec, rows), pass, base) : base;
}

/** Whether group `layer` is a checkpointed unit under --recompute (a GPT block). */
export const recomputes = (spec: ModelSpec, layer: number): boolean => passes(spec).recomputes(spec, layer);

/** The model's FLOPs for one forward + backward on `rows` rows: 6 per parameter per token (the convention
 *  MFU is quoted in) plus causal attention's products. */
export function modelFlops(spec: ModelSpec, rows: number): number {
  const all = spec.layers.map((_, i) => layerWork(spec, i, rows, 'forward').flops + layerWork(spec, i, rows, 'backward').flops);
  return all.reduce((a, b) => a + b, 0);
}

/** Tokens (GPT) or rows (MLP) in `rows` batch rows. */
export const tokensOf = (spec: ModelSpec, rows: number): number => passes(spec).tokens(spec, rows);

/** Bytes of activations a bf16 GPU framework keeps for the backward pass (with its adapters' x·Aᵀ). */
export const activationBytes = (spec: ModelSpec, rows: number, recompute: boolean): number =>
  passes(spec).activationBytes(spec, rows, recompute) + adapterActivationBytes(spec.layers, tokensOf(spec, rows));

/** Block quantization of `values` 16-bit values (ZeRO++): read, absmax per block, scale, write the codes; or
 *  dequantize: read the codes, write 16-bit. Memory-bound, two launches. */
export function quantizeWork(values: number, codeBytes: number): Work {
  return { kernels: 2, flops: 0, bytes: values * (2 + 2) + codeBytes };
}

/** The optimizer over `params` owned parameters with `gradBytes`-byte gradients, writing the 16-bit copy. */
export function optimizerWork(params: number, gradBytes: number): Work {
  return params > 0 ? adamWork(params, gradBytes, 2) : NO_WORK;
}
