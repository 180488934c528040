// ZeRO-1: the optimizer states are sharded (table.ts). The step is DP's; the base class reads the flag and
// reduce-scatters instead of all-reducing, updates its slice, and all-gathers the 16-bit parameters.
import type { SchemeName } from '../../control/run-config.js';
import { DataParallel } from './base.js';

export class Zero1 extends DataParallel {
  override readonly name: SchemeName = 'zero1';
}
