// A kernel thread's main: the matmul kernels bound to its rank's shared kernel arena, waiting on the
// arena's control words for a share of a product to compute (see kernel-threads.ts). It never returns to
// its event loop; the rank terminates it.
import { workerData } from 'node:worker_threads';
import { instantiate } from './wasm/load.js';
import { runShare, SLOT, type ProductKernels } from './kernel-threads.js';

const { memory, control, index, flavour } = workerData as {
  memory: WebAssembly.Memory;
  control: SharedArrayBuffer;
  index: number;
  flavour: 'relaxed-simd' | 'simd';
};
const k = instantiate<ProductKernels>('matmul', memory, flavour)!.exports;
const ctrl = new Int32Array(control);
let seen = 0;
for (;;) {
  Atomics.wait(ctrl, SLOT.generation, seen);
  seen = Atomics.load(ctrl, SLOT.generation);
  runShare(k, ctrl, index);
  if (Atomics.sub(ctrl, SLOT.remaining, 1) === 1) Atomics.notify(ctrl, SLOT.remaining);
}
