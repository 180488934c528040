// DDP's gradient buckets: whole units taken in reverse order (the order the backward pass finishes them),
// each bucket closed as soon as it reaches its cap, the unit that reached it included (PyTorch's
// compute_bucket_assignment_by_size, as DDP rebuilds its buckets after the first iteration in the order the
// gradients became ready). The first bucket has a small cap of its own so that communication starts early.
// A bucket's reduction starts the moment its last unit's gradient is written.
import type { Unit } from './layout.js';
export { DEFAULT_BUCKET_BYTES } from '../control/run-config.js';
const FIRST_BUCKET_BYTES = 2 ** 20; // DDP's first bucket

/** Buckets in the order they become ready (last units first). `bytesPerElem` is the gradient's dtype size. */
export function gradientBuckets(units: readonly Unit[], capBytes: number, bytesPerElem: number): Unit[][] {
  if (!(capBytes > 0)) throw new RangeError(`bucket cap must be positive, got ${capBytes} bytes`);
  const buckets: Unit[][] = [];
  let open: Unit[] = [];
  let bytes = 0;
  const cap = () => (buckets.length === 0 ? Math.min(FIRST_BUCKET_BYTES, capBytes) : capBytes);
  for (const u of [...units].reverse()) {
    open.push(u);
    bytes += u.padded * bytesPerElem;
    if (bytes >= cap()) {
      buckets.push(open);
      open = [];
      bytes = 0;
    }
  }
  if (open.length) buckets.push(open);
  return buckets;
}
