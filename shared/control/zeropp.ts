// Which of ZeRO++'s components a scheme runs with (training/schemes/zeropp.ts): `zeropp` all three, `zero3` those
// asked for (--qwz, --hpz, --qgz), no other scheme any; and which host rings the run's ranks must wire for them.
import type { RunConfig, SchemeName } from './run-config.js';

/** DeepSpeed's qwZ quantizer aims at groups of at most 8000 values (CUDAQuantizer.target_group_size). */
export const DEFAULT_QUANT_BLOCK = 8000;

export interface Components {
  qwz: boolean;
  hpz: boolean;
  qgz: boolean;
  block: number;
}

export function componentsOf(c: Pick<RunConfig, 'zeropp'>, scheme: SchemeName): Components | undefined {
  const block = c.zeropp?.block ?? DEFAULT_QUANT_BLOCK;
  if (scheme === 'zeropp') return { qwz: true, hpz: true, qgz: true, block };
  const z = c.zeropp;
  return scheme === 'zero3' && z && (z.qwz || z.hpz || z.qgz) ? z : undefined;
}

/** The host rings some scheme of the run needs: hpZ's group ring, qgZ's stride rings. */
export function hostRingsNeeded(c: Pick<RunConfig, 'zeropp' | 'schemes'>): { hpz: boolean; qgz: boolean } {
  const all = c.schemes.map((s) => componentsOf(c, s)).filter((x) => x !== undefined);
  return { hpz: all.some((x) => x.hpz), qgz: all.some((x) => x.qgz) };
}
