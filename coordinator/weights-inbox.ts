// The final weights ranks send in pieces before their summaries (rank/weights-upload.ts), put together per
// rank as they arrive: in order, each piece where the last one ended, never past the total announced.
import { weightBytesFrom } from '../shared/accounting/final-weights.js';
import type { RunPlan } from '../shared/accounting/run-plan.js';
import type { ControlMessage, RankSummary, SchemeSummary } from '../shared/control/messages.js';

type WeightsPiece = Extract<ControlMessage, { type: 'weights' }>;

export class WeightsInbox {
  private readonly open = new Map<string, { bytes: Uint8Array; got: number }>();

  /** Take a piece; a reason it is refused, or null. Its total is checked against what the run needs from
   *  that rank before anything is allocated: a broken rank's announcement costs the coordinator nothing. */
  add(p: WeightsPiece, plan: RunPlan): string | null {
    const expected = weightBytesFrom(plan, p.scheme, p.rank);
    if (p.total !== expected) return `weights: ${p.total} bytes in all, where this run needs ${expected} from it`;
    const key = `${p.scheme}:${p.rank}`;
    const into = this.open.get(key) ?? { bytes: new Uint8Array(expected), got: 0 };
    if (p.offset !== into.got) return `weights: a piece at byte ${p.offset}, expected the one at ${into.got}`;
    if (p.offset + p.bytes.byteLength > p.total) return `weights: a piece ends at byte ${p.offset + p.bytes.byteLength}, past the ${p.total} announced`;
    into.bytes.set(p.bytes, p.offset);
    into.got += p.bytes.byteLength;
    this.open.set(key, into);
    return null;
  }

  /** The summary with the weights its rank sent before it, as many as the run needs from it; or why not. */
  complete(s: RankSummary, plan: RunPlan): SchemeSummary | string {
    const expected = weightBytesFrom(plan, s.scheme, s.rank);
    const key = `${s.scheme}:${s.rank}`;
    const into = this.open.get(key) ?? { bytes: new Uint8Array(0), got: 0 };
    this.open.delete(key);
    if (s.weightBytes !== expected) return `a summary with ${s.weightBytes} bytes of weights, where this run needs ${expected} from it`;
    if (into.got !== expected || into.bytes.byteLength !== expected) return `a summary after ${into.got} of ${expected} bytes of weights`;
    return { ...s, master: into.bytes };
  }
}
