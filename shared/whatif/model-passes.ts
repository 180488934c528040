// Our models as GPU work, layer by layer (the scheme hands compute one parameter group at a time): what each
// group's forward and backward launch on a modeled device, the model's FLOPs, and the activations a GPU
// framework keeps (flash attention: no T x T scores).
import type { ModelSpec } from '../training/model-spec.js';
import { adamWork } from './model-work.js';
import { NO_WORK, type Work } from './gpu-cost.js';
import { adaptedWork, adapterActivationBytes } from './adapter-work.js';

/** What the cost model needs of a model, bound to its spec: each model's folder has its own (passes.ts). */
export interface GpuPasses {
  /** Group `layer`'s work on `rows` batch rows (MLP rows, sequences). */
  layerWork(layer: number, rows: number, pass: 'forward' | 'backward'): Work;
  /** Whether group `layer` is a checkpointed unit under --recompute. */
  recomputes(layer: number): boolean;
  /** Tokens (or rows) in `rows` batch rows. */
  tokens(rows: number): number;
  /** Bytes of activations a bf16 GPU framework keeps for the backward pass. */
  activationBytes(rows: number, recompute: boolean): number;
}

/** A spec with its model's GPU passes: what the cost model reads (models/registry.ts's gpuModel). */
export interface GpuModel {
  readonly spec: ModelSpec;
  readonly gpu: GpuPasses;
}

/** Group `layer`'s work on `rows` batch rows (MLP rows, GPT sequences), as fine-tuning changes it (adapter-work.ts). */
export function layerWork(m: GpuModel, layer: number, rows: number, pass: 'forward' | 'backward'): Work {
  const base = m.gpu.layerWork(layer, rows, pass);
  return m.spec.adapt ? adaptedWork(m.spec.layers[layer], m.gpu.tokens(rows), pass, base) : base;
}

/** Whether group `layer` is a checkpointed unit under --recompute (a GPT block). */
export const recomputes = (m: GpuModel, layer: number): boolean => m.gpu.recomputes(layer);

/** The model's FLOPs for one forward + backward on `rows` rows: 6 per parameter per token (the convention
 *  MFU is quoted in) plus causal attention's products. */
export function modelFlops(m: GpuModel, rows: number): number {
  const all = m.spec.layers.map((_, i) => layerWork(m, i, rows, 'forward').flops + layerWork(m, i, rows, 'backward').flops);
  return all.reduce((a, b) => a + b, 0);
}

/** Tokens (GPT) or rows (MLP) in `rows` batch rows. */
export const tokensOf = (m: GpuModel, rows: number): number => m.gpu.tokens(rows);

/** Bytes of activations a bf16 GPU framework keeps for the backward pass (with its adapters' x·Aᵀ). */
export const activationBytes = (m: GpuModel, rows: number, recompute: boolean): number =>
  m.gpu.activationBytes(rows, recompute) + adapterActivationBytes(m.spec.layers, m.gpu.tokens(rows));

/** Block quantization of `values` 16-bit values (ZeRO++): read them, absmax per block, scale, write the codes;
 *  or dequantize: read the codes, write 16-bit. One launch and one pass each way: DeepSpeed's kernels
 *  (`cached_quantization` and its dequantize) hold a block in registers between its absmax and its scaling,
 *  so the values cross memory once. Memory-bound. */
export function quantizeWork(values: number, codeBytes: number): Work {
  return { kernels: 1, flops: 0, bytes: values * 2 + codeBytes };
}

/** The optimizer over `params` owned parameters with `gradBytes`-byte gradients, writing the 16-bit copy. */
export function optimizerWork(params: number, gradBytes: number): Work {
  return params > 0 ? adamWork(params, gradBytes, 2) : NO_WORK;
}
