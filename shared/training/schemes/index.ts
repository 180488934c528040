// The four scheme classes by name. Their flags are the rows of SCHEME_TABLE (table.ts).
import type { SchemeName } from '../../control/run-config.js';
import { DataParallel, type Base } from './base.js';
import { Zero1 } from './zero1.js';
import { Zero2 } from './zero2.js';
import { Zero3 } from './zero3.js';
import { Hsdp } from './hsdp.js';

export const SCHEME_CLASSES: Record<SchemeName, new () => Base> = { dp: DataParallel, zero1: Zero1, zero2: Zero2, zero3: Zero3, hsdp: Hsdp };
