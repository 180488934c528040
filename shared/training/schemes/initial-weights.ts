// A scheme's initial weights into its bands, straight into the heap (the SIMD kernels round them; no full-size
// temporary: at 10^7 parameters a JavaScript loop stalls the rank): the fp32 masters (whole or this rank's
// shard), the 16-bit working copy (whole or the shard) and the frozen parameters' copy, rounded once.
import { isExtent, type Elems } from '../../tensor/dtype.js';
import type { SchemeFlags } from './table.js';
import type { SchemeContext } from './context.js';

interface Bands {
  master: Float32Array;
  working: Elems;
  frozenWorking: Elems;
  scratch: Float32Array; // fp32, one unit's padded trainable half at least
}

export function loadWeights(ctx: SchemeContext, flags: SchemeFlags, bands: Bands, theta: Float32Array): void {
  const { layout, values } = ctx;
  const frozen = layout.frozenParams > 0;
  if (frozen && isExtent(theta)) return; // a what-if rank's extent: no values to load
  const theta0 = layout.trainableOf(theta);
  if (frozen) loadFrozen(ctx, flags.shardParameters, bands.frozenWorking, theta);
  if (flags.shardOptimizer) layout.shardInto(theta0, bands.master);
  else layout.padInto(theta0, bands.master);
  if (flags.shardParameters === flags.shardOptimizer) return values.fromF32(bands.master, bands.working); // same layout
  // ZeRO-1/2: the working copy is whole while the masters are a shard: unit by unit through the scratch.
  for (const u of layout.units) {
    const unit = bands.scratch.subarray(0, u.padded);
    unit.set(theta0.subarray(u.offset, u.offset + u.size));
    unit.fill(0, u.size);
    values.fromF32(unit, bands.working.subarray(u.paddedOffset, u.paddedOffset + u.padded));
  }
}

/** The frozen parameters into their working copy (whole, or this rank's shard), unit by unit through a
 *  scratch of one frozen half, rounded once: they never change. */
function loadFrozen(ctx: SchemeContext, sharded: boolean, frozenWorking: Elems, theta: Float32Array): void {
  const { layout, ledger, values } = ctx;
  const scratch = ledger.allocF32('compute', Math.max(...layout.units.map((u) => u.frozen.padded)));
  for (const u of layout.units) {
    const f = u.frozen;
    if (!f.size) continue;
    const unit = scratch.subarray(0, f.padded);
    layout.frozenHalfInto(theta, u, unit);
    unit.fill(0, f.size);
    const [from, n, to] = sharded ? [layout.rank * f.shard, f.shard, f.shardOffset] : [0, f.padded, f.paddedOffset];
    values.fromF32(unit.subarray(from, from + n), frozenWorking.subarray(to, to + n));
  }
  ledger.free(scratch);
}
