// The four scheme classes by name. Their flags are the rows of SCHEME_TABLE (table.ts).
import type { RunConfig, SchemeName } from '../../control/run-config.js';
import { ZeroPlusPlus, ZeroPP } from './zeropp/zero3-plus.js';
import { componentsOf, takesComponents } from './table.js';
import { DataParallel, type Base } from './base.js';
import { Zero1 } from './zero1.js';
import { Zero2 } from './zero2.js';
import { Zero3 } from './zero3.js';
import { Hsdp } from './hsdp.js';

export const SCHEME_CLASSES: Record<SchemeName, new () => Base> = {
  dp: DataParallel,
  zero1: Zero1,
  zero2: Zero2,
  zero3: Zero3,
  hsdp: Hsdp,
  zeropp: ZeroPlusPlus,
};

/** A scheme's class for this run: ZeRO-3 with some of ZeRO++'s components on is ZeroPP (zeropp.ts). */
export function schemeClass(name: SchemeName, c: Pick<RunConfig, 'zeropp'>): new () => Base {
  return takesComponents(name) && componentsOf(c, name) ? ZeroPP : SCHEME_CLASSES[name];
}
