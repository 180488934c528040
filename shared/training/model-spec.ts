// What the training engine needs of a model's spec, whichever model it is: its parameter groups (the units a
// scheme gathers and reduces), their tensors by name, its initial weights and the activations a batch keeps.
// The models themselves live in shared/models/<name>/, and shared/models/registry.ts builds them.
import type { Adaptation, Adapter } from './adapters.js';
import type { NamedTensor, ParamGroup } from './param-group.js';

/** A unit of a model: its parameters, their tensors and any adapters on them. */
export interface ModelGroup extends ParamGroup {
  tensors: NamedTensor[];
  adapters: Adapter[];
  kind?: string; // a decoder's embeddings, block or head (an embeddings group's 2-D tensors are lookups, not products)
}

export interface ModelSpec {
  /** The registry's key (the `arch` of the model's configuration). */
  readonly kind: string;
  readonly layers: readonly ModelGroup[];
  readonly params: number;
  readonly adapt?: Adaptation;
  /** Every tensor with its torch name, offset and shape. */
  tensors(): NamedTensor[];
  /** The model as `--model` writes it. */
  describe(): string;
  init(seed: number): Float32Array;
  /** Bytes the CPU forward pass keeps for the backward pass for `rows` batch rows. */
  activationBytes(rows: number, recompute?: boolean): number;
}
