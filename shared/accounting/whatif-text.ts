// The what-if table (--compute model:PRESET), printed under the main one: what was modeled beside what the
// network really did with it.
import type { Report } from './report.js';
import { textTable } from './table.js';
import { formatBytes } from './units.js';

const pct = (x: number) => (x >= 0.001 ? `${(100 * x).toFixed(1)}%` : `${(100 * x).toPrecision(2)}%`);

/** The what-if table's cells, the lines before it and after it (for text and HTML alike); null when compute
 *  ran here. */
export function whatIfCells(r: Report): { before: string[]; header: string[][]; rows: string[][]; after: string[] } | null {
  const d = r.device;
  if (!d) return null;
  const header = [
    ['', 'compute ms', 'step ms', 'tokens/s', 'MFU', 'MFU', `per GPU (theory, ${d.memoryGB} GB card)`, '', 'algbw/busbw GB/s'],
    ['scheme', 'modeled', 'compute modeled', 'compute modeled', 'compute alone', 'compute modeled', 'states+activations', 'fits', 'per collective'],
  ];
  const rows = r.rows.map((x) => {
    const w = x.whatif!;
    return [
      x.title,
      w.modeledComputeMs.toFixed(1),
      x.time.stepMs.toFixed(1),
      w.tokensPerSecond.toFixed(0),
      pct(w.modeledMfu),
      pct(w.achievedMfu),
      `${formatBytes(w.theoryMemory.statesBytes)} + ${formatBytes(w.theoryMemory.activationsBytes)} = ${formatBytes(w.theoryMemory.total)}`,
      w.theoryMemory.fits ? 'yes' : 'NO',
      w.collectives.map((c) => `${c.kind} ${c.algbwGBps.toFixed(3)}/${c.busbwGBps.toFixed(3)}`).join(', '),
    ];
  });
  const K = r.config.linkScale;
  const scaled =
    K > 1
      ? [
          `--link-scale ${K}: every collective carried 1/${K} of its bytes (the theory column too), so each link stood for one ${K}× faster with the same latency; busbw is the model's bytes over the measured time`,
        ]
      : [];
  return {
    before: [
      ...scaled,
      `what-if: compute modeled on ${d.title} (${d.peakTflops} TFLOPS dense ${d.precision ?? 'bf16'}, ${d.memoryGB} GB; ${d.source}); ${calibration(d)}; ${r.simulated ? "every collective took the simulated network's time" : "every collective really ran over this run's sockets"}`,
    ],
    header,
    rows,
    after: [
      r.simulated
        ? "step ms (compute modeled) = the simulated step: the ranks' own schedule, the modeled compute and the network model's collectives; tokens/s and the second MFU come from that step, and hold as far as the cost model and the network model do"
        : "step ms (compute modeled) = this run's measured step, whose compute was a wait of the modeled time and whose collectives really ran: not a GPU's step; tokens/s and the second MFU come from that step, so from the modeled compute, and hold only as far as the cost model does",
      'modeled = the cost model (docs/what-if.md), not measured; MFU = 6·params·tokens + attention FLOPs over time at the dense peak (compute alone: over the modeled compute; compute modeled: over the step above); per GPU memory = model states at the step peak + activations as a bf16 framework with flash attention keeps them, both by theory; algbw = the model bytes of a collective over its time, busbw = algbw·2(N−1)/N for all-reduce, ·(N−1)/N otherwise (as nccl-tests defines them)',
    ],
  };
}

/** The what-if table as text lines, or nothing when compute ran here. */
export function whatIfText(r: Report): string[] {
  const c = whatIfCells(r);
  return c ? [...c.before, textTable(c.header, c.rows), ...c.after] : [];
}

/** Whether a device's model was measured on it, or is its datasheet with the H200's fitted efficiencies. */
function calibration(d: { calibrated?: boolean; name: string }): string {
  return d.calibrated
    ? 'the cost model was fitted on this card'
    : "modeled from its datasheet with the H200's fitted efficiencies, not calibrated on this card";
}
