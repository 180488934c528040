// DeepSpeed's offload on a rank (--offload): ZeRO-Offload keeps the fp32 masters and Adam's moments in host
// memory and runs Adam there, so each step the rank's reduced gradient shard is copied from the device to the
// host and its updated 16-bit shard back; ZeRO-Infinity's offload_param keeps ZeRO-3's 16-bit shard on the host
// too, copied to the device before each gather instead. The bands say where each buffer lives (the ledger's
// host bands); this counts the copies, so a run shows them beside the theory, as it shows the wire.
import type { Band } from '../../tensor/memory-ledger.js';

/** Bytes copied between device and host since the last take(). */
export class PcieTally {
  d2h = 0;
  h2d = 0;

  take(): { d2h: number; h2d: number } {
    const t = { d2h: this.d2h, h2d: this.h2d };
    [this.d2h, this.h2d] = [0, 0];
    return t;
  }
}

/** Where a model-state band lives: the host's band when it is offloaded, else the device's. */
export function placed(band: 'master' | 'm' | 'v' | 'accum' | 'params16' | 'frozen16', host: boolean): Band {
  return host ? `host ${band}` : band;
}
