// What the report says of a fine-tuning run (--lora, --freeze): what trains and what is frozen, and each
// scheme's bytes per step split into the frozen parameters' gathers and everything on the trainable ones.
import { bytesPerElement } from '../tensor/dtype.js';
import type { Report } from './report.js';
import { formatBytes } from './units.js';

export function fineTuneNotes(r: Report): string[] {
  const c = r.config;
  const row = r.rows[0];
  if (!c.adapt || !row) return [];
  const { lora, freeze } = c.adapt;
  const P = row.params;
  const T = row.trainableParams;
  const how = [
    lora &&
      `LoRA r=${lora.rank}, alpha ${lora.alpha} (scale ${+(lora.alpha / lora.rank).toPrecision(3)}) on ${lora.targets ? lora.targets.join(', ') : 'every Linear of the blocks'}`,
    freeze && `frozen: ${freeze.join(', ')}`,
  ].filter(Boolean);
  const bits = bytesPerElement(c.wireDtype) * 8;
  return [
    `fine-tuning (${how.join('; ')}): ${T.toLocaleString('en-US')} of ${P.toLocaleString('en-US')} parameters train (${((100 * T) / P).toPrecision(3)}%); the ${(P - T).toLocaleString('en-US')} frozen ones are held as their ${bits}-bit copy alone (no gradient, master or moments): whole under DP, ZeRO-1 and ZeRO-2, which reduce only what trains; sharded under ZeRO-3 and HSDP, which gather them for every forward pass and for the backward pass (the input's gradient needs them)`,
    `sent per rank per step by theory, frozen gathers + the trainable parameters' traffic: ${r.rows.map((x) => `${x.title} ${formatBytes(x.sentPerStep.frozenTheory)} + ${formatBytes(x.sentPerStep.theory - x.sentPerStep.frozenTheory)}`).join(', ')}`,
  ];
}
