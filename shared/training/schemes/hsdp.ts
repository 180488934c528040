// HSDP (FSDP's HYBRID_SHARD, ZeRO++'s hpZ in spirit): ZeRO-3 within a shard group of G ranks, replicas across
// the groups. Nothing here: the rank's layout shards over its group and its collectives run on the group's
// ring (scheme-run.ts), and each unit's reduced gradient shard is all-reduced over the cross ring of the
// ranks that hold the same shard in every group (gradients.ts). The step is ZeRO-3's.
import type { SchemeName } from '../../control/run-config.js';
import { Zero3 } from './zero3.js';

export class Hsdp extends Zero3 {
  override readonly name: SchemeName = 'hsdp';
}
