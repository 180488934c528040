// ZeRO++'s quantization error in the report, per step over every rank: qwZ's of the gathered weights (each
// rank's shards against their 16-bit values), qgZ's of the gradients' exchanges (each quantization against
// what it quantized).
import type { SchemeSummary } from '../control/messages.js';

export interface QuantErrors {
  weights: QuantErrorSteps | null;
  grads: QuantErrorSteps | null;
}

/** Per step: the largest error over the largest magnitude, the summed error over the summed magnitude. */
export interface QuantErrorSteps {
  maxRel: number[];
  meanRel: number[];
}

/** ZeRO++'s quantization error per step, over every rank (qwZ: the gathered weights, qgZ: what the gradients'
 *  exchanges sent); null where nothing was quantized. */
export function quantError(sums: SchemeSummary[]): QuantErrors | null {
  if (!sums[0]?.steps.every((x) => x.quant)) return null;
  const of = (k: 'weights' | 'grads'): QuantErrorSteps | null => {
    if (!sums[0].steps[0].quant?.[k]) return null;
    const steps = sums[0].steps.map((_, t) => sums.map((s) => s.steps[t]?.quant?.[k] ?? { sumErr: 0, sumAbs: 0, maxErr: 0, maxAbs: 0 }));
    if (steps.every((q) => q.every((x) => x.sumAbs === 0))) return null; // nothing had values (modeled compute)
    return {
      maxRel: steps.map((q) => Math.max(...q.map((x) => x.maxErr)) / Math.max(...q.map((x) => x.maxAbs))),
      meanRel: steps.map((q) => q.reduce((a, x) => a + x.sumErr, 0) / q.reduce((a, x) => a + x.sumAbs, 0)),
    };
  };
  return { weights: of('weights'), grads: of('grads') };
}
