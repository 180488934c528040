// A model's parameters come in groups that lie one after another in the flat vector: an MLP's layers, a
// GPT's embeddings, blocks and head. With --unit layer each group is one unit (one gather, one bucket).
export interface ParamGroup {
  index: number;
  offset: number; // where the group starts in the flat parameter vector
  size: number;
}

/** A tensor of a group with its torch name, where it starts and its shape. */
export interface NamedTensor {
  name: string;
  offset: number;
  shape: number[];
}
