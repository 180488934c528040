// A scheme's row with offload (--offload): the bytes its ranks copied between device and host per step beside
// the theory's (offload-theory.ts), and the model states the host held beside the theory's.
import { HOST_BANDS } from '../tensor/memory-ledger.js';
import type { SchemeSummary } from '../control/messages.js';
import type { SchemeName } from '../control/run-config.js';
import type { RunPlan } from './run-plan.js';

export interface OffloadRow {
  pcie: { theory: { d2h: number; h2d: number }; measured: { d2h: number; h2d: number } }; // bytes per rank per step
  host: { theory: number; measured: number }; // bytes of model states a rank's host holds for it, between steps
  ms?: { pcie: number; hostAdam: number }; // a modeled device's: the copies' time and the host's Adam's, per step
}

/** The row's offload figures, where the run offloads. */
export function offloadRow(
  plan: RunPlan,
  scheme: SchemeName,
  sums: SchemeSummary[],
  hostTheory: number,
  perStep: (f: (s: SchemeSummary) => number) => number,
): { offload?: OffloadRow } {
  const theory = plan.pcie(scheme);
  if (!theory) return {};
  const copied = (dir: 'd2h' | 'h2d') => perStep((s) => s.steps.reduce((t, x) => t + (x.pcie?.[dir] ?? 0), 0));
  const held = Math.max(...sums.map((s) => HOST_BANDS.reduce((t, b) => t + (s.memory.resident[b] ?? 0), 0)));
  const timed = sums[0].steps.some((x) => x.offloadMs);
  const ms = (k: 'pcie' | 'hostAdam') => perStep((s) => s.steps.reduce((t, x) => t + (x.offloadMs?.[k] ?? 0), 0));
  const row: OffloadRow = { pcie: { theory, measured: { d2h: copied('d2h'), h2d: copied('h2d') } }, host: { theory: hostTheory, measured: held } };
  return { offload: timed ? { ...row, ms: { pcie: ms('pcie'), hostAdam: ms('hostAdam') } } : row };
}
