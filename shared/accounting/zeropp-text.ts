// What the report says of a run with ZeRO++'s components on its ZeRO-3 (--qwz, --hpz): which are on, and qwZ's
// quantization error of the gathered weights, step by step.
import type { Report } from './report.js';

export function zeroPPNotes(r: Report): string[] {
  const z = r.config.zeropp;
  if (!z) return [];
  const on = [
    z.qwz && `qwZ (gathers as int8, blocks of ${z.block})`,
    z.hpz && `hpZ (a secondary copy over each host's ${r.config.shardGroup} ranks; backward gathers on the host)`,
  ];
  const notes = [`ZeRO-3 with ZeRO++'s ${on.filter(Boolean).join(' and ')}`];
  for (const x of r.rows) {
    const q = x.quantError;
    if (!q || !q.maxRel.length) continue;
    const e = (v: number) => v.toExponential(2);
    const worst = Math.max(...q.maxRel);
    notes.push(
      `${x.title}: quantization error of the gathered weights (against their 16-bit values, over every rank's shards), per step: largest error over largest magnitude ${e(q.maxRel[0])} at step 1, ${e(q.maxRel[q.maxRel.length - 1])} at the last, ${e(worst)} at worst; summed error over summed magnitude ${e(q.meanRel[0])} to ${e(q.meanRel[q.meanRel.length - 1])}`,
    );
  }
  return notes;
}
