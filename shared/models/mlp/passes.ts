// The MLP on a modeled GPU: each layer one Linear (the last without GELU), its activations bf16.
import { linearWork } from '../../whatif/model-work.js';
import type { GpuPasses } from '../../whatif/model-passes.js';
import type { MlpSpec } from './mlp.js';

export const mlpPasses = (spec: MlpSpec): GpuPasses => ({
  layerWork: (layer, rows, pass) => {
    const l = spec.layers[layer];
    return linearWork(l.inputs, l.outputs, rows, layer === spec.layers.length - 1, pass);
  },
  recomputes: () => false,
  tokens: (rows) => rows,
  activationBytes: (rows) => spec.layers.reduce((s, l) => s + 2 * 2 * rows * l.outputs, 0), // pre- and post-GELU, bf16
});
