// ZeRO++'s components as the run config carries them (training/schemes/zeropp/); which scheme runs which is
// the scheme table's (training/schemes/table.ts).

/** DeepSpeed's qwZ quantizer aims at groups of at most 8000 values (CUDAQuantizer.target_group_size). */
export const DEFAULT_QUANT_BLOCK = 8000;

export interface Components {
  qwz: boolean;
  hpz: boolean;
  qgz: boolean;
  block: number;
}
