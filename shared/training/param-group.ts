// A model's parameters come in groups that lie one after another in the flat vector: an MLP's layers, a
// GPT's embeddings, blocks and head. With --unit layer each group is one unit (one gather, one bucket).
import type { Elems } from '../tensor/dtype.js';

export interface ParamGroup {
  index: number;
  offset: number; // where the group starts in the flat parameter vector
  size: number;
  frozen: number; // the group's first `frozen` elements train not (adapters.ts): its base under LoRA, all of it under --freeze
  /** A tied head: the group computes with another group's leading `size` elements too (the token table), handed
   *  to it after its own (base.ts), their gradient carried back to that group. */
  borrows?: Borrowed;
}

export interface Borrowed {
  from: number; // the lending group's index
  size: number;
  tensor: NamedTensor; // as the borrowing group's passes name it, at the group's own end
}

/** What a group's passes load: its own parameters and any it borrows. */
export const loadedSize = (g: ParamGroup): number => g.size + (g.borrows?.size ?? 0);

/** A tensor of a group with its torch name, where it starts and its shape. */
export interface NamedTensor {
  name: string;
  offset: number;
  shape: number[];
}

/** A group's parameters as a scheme hands them over: its frozen prefix and its trainable rest (either may be
 *  empty), fp32 or bf16 bits. */
export type GroupParams = readonly [frozen: Elems, trainable: Elems];

/** A group's parameters given whole (one array, frozen prefix first) or as its two parts: as two parts. */
export function groupParts(g: ParamGroup, params: Elems | GroupParams): GroupParams {
  if (Array.isArray(params)) return params as GroupParams;
  const whole = params as Elems;
  return [whole.subarray(0, g.frozen), whole.subarray(g.frozen, loadedSize(g))];
}
