// ZeRO-2 adds no logic: it declines to keep the gradients it does not own (table.ts), so each unit's
// gradient is reduce-scattered as soon as its backward pass ends and only the owned slice stays.
import type { SchemeName } from '../../control/run-config.js';
import { Zero1 } from './zero1.js';

export class Zero2 extends Zero1 {
  override readonly name: SchemeName = 'zero2';
}
