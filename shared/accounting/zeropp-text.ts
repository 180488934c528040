// What the report says of a run with ZeRO++'s components on its ZeRO-3 (--qwz, --hpz, --qgz): which are on, and
// the quantization error, step by step: qwZ's of the gathered weights, qgZ's of the gradients' exchanges.
import type { Report } from './report.js';
import { componentsOf } from '../training/schemes/table.js';
import type { QuantErrorSteps } from './quant-error.js';

export function zeroPPNotes(r: Report): string[] {
  const notes: string[] = [];
  for (const x of r.rows) {
    const z = componentsOf(r.config, x.scheme);
    if (!z) continue;
    const on = [
      z.qwz && `qwZ (gathers as int8, blocks of ${z.block})`,
      z.hpz && `hpZ (a secondary copy over each host's ${r.config.shardGroup} ranks; backward gathers on the host)`,
      z.qgz && `qgZ (gradients as two all-to-alls of int4 blocks of ${z.block}, within the host, then across)`,
    ];
    notes.push(`${x.title}: ZeRO-3 with ZeRO++'s ${on.filter(Boolean).join(', ')}`);
  }
  const e = (v: number) => v.toExponential(2);
  const line = (what: string, q: QuantErrorSteps) =>
    `${what}, per step: largest error over largest magnitude ${e(q.maxRel[0])} at step 1, ${e(q.maxRel[q.maxRel.length - 1])} at the last, ${e(Math.max(...q.maxRel))} at worst; summed error over summed magnitude ${e(q.meanRel[0])} to ${e(q.meanRel[q.meanRel.length - 1])}`;
  for (const x of r.rows) {
    const q = x.quantError;
    if (q?.weights?.maxRel.length)
      notes.push(line(`${x.title}: quantization error of the gathered weights (against their 16-bit values, over every rank's shards)`, q.weights));
    if (q?.grads?.maxRel.length)
      notes.push(
        line(`${x.title}: quantization error of the gradients' exchanges (each quantization against what it quantized, within the host and across)`, q.grads),
      );
  }
  return notes;
}
