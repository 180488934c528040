// What a joined rank may send the coordinator in one message, derived from the run. The largest real one is
// a scheme's summary (every step's metrics) or a piece of its final weights (WEIGHT_PIECE_BYTES).
// A rank that announces more is refused at the frame header (ws checks it before buffering anything), so a
// careless or broken peer costs the coordinator nothing, and the run stops naming it.
import type { RunPlan } from '../shared/accounting/run-plan.js';
import { WEIGHT_PIECE_BYTES } from '../shared/control/messages.js';

/** msgpack of one collective's brief (kind, label up to 128 characters, seven numbers) with room to spare. */
const COLLECTIVE_BYTES = 512;
/** ... of one unit's forward or backward span. */
const UNIT_SPAN_BYTES = 128;
/** ... of a step's fixed part: loss, times, traffic, band peaks. */
const STEP_BYTES = 4096;
/** ... of the summary's fixed part: memory, socket, clock, interface. */
const SUMMARY_BYTES = 64 << 10;

/** Bytes one control message from a rank may hold in this run at this world size. */
export function memberMessageCap({ config, layout0 }: RunPlan): number {
  const units = layout0.units.length;
  // Per step, at most: ZeRO-3's two gathers and one reduce-scatter per unit (each may be split by prefetch
  // and recompute), the loss and the clock's collectives: 8 per unit and 16 more bounds them all.
  const step = STEP_BYTES + (8 * units + 16) * COLLECTIVE_BYTES + 4 * units * UNIT_SPAN_BYTES;
  return SUMMARY_BYTES + Math.max(WEIGHT_PIECE_BYTES, config.steps * step);
}
