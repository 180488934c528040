// Threads inside a rank (--threads T), like PyTorch's intra-op threads: a product's rows are split into T
// shares, the rank's own thread computes the first and T-1 kernel threads (kernel-thread.ts) the others,
// all on the same shared WebAssembly memory. Each element of the result is computed exactly as a single
// thread would, so results do not depend on T. Work is handed over through control words in shared memory
// (Atomics), not messages: a product takes a fraction of a millisecond, a message round trip about as long.
import { Worker } from 'node:worker_threads';
import type { SimdFlavour } from './wasm/load.js';

export interface ProductKernels {
  linear_forward(x: number, w: number, b: number, y: number, M: number, K: number, N: number): void;
  product(a: number, ai: number, ak: number, b: number, c: number, M: number, N: number, K: number): void;
}

/** Control words: a job's generation, threads still working, the job, its arguments. */
export const SLOT = { generation: 0, remaining: 1, op: 2, threads: 3, args: 4 } as const;
const OP = { forward: 1, product: 2 } as const;
const ARGS = 8;
/** Rows per tile of each kernel: a share is a whole number of tiles. */
const GRAIN = { [OP.forward]: 2, [OP.product]: 4 } as const;
/** How long the rank waits for its kernel threads before it calls the run broken. */
const STALL_MS = 30_000;

/** Rows [lo, hi) of M that share `i` of `threads` computes. */
function shareOf(M: number, threads: number, i: number, grain: number): [number, number] {
  const tiles = Math.ceil(M / grain);
  return [Math.min(M, Math.floor((tiles * i) / threads) * grain), Math.min(M, Math.floor((tiles * (i + 1)) / threads) * grain)];
}

/** Compute share `i` of the job in the control words. */
export function runShare(k: ProductKernels, ctrl: Int32Array, i: number): void {
  const op = ctrl[SLOT.op] as 1 | 2;
  const a = (j: number) => ctrl[SLOT.args + j]; // read in place: this runs for every product, on every thread
  if (op === OP.forward) {
    const [x, w, b, y, M, K, N] = [a(0), a(1), a(2), a(3), a(4), a(5), a(6)];
    const [lo, hi] = shareOf(M, ctrl[SLOT.threads], i, GRAIN[op]);
    if (hi > lo) k.linear_forward(x + lo * K * 4, w, b, y + lo * N * 4, hi - lo, K, N);
  } else {
    const [pa, ai, ak, pb, pc, M, N, K] = [a(0), a(1), a(2), a(3), a(4), a(5), a(6), a(7)];
    const [lo, hi] = shareOf(M, ctrl[SLOT.threads], i, GRAIN[op]);
    if (hi > lo) k.product(pa + lo * ai, ai, ak, pb, pc + lo * N * 4, hi - lo, N, K);
  }
}

export class KernelThreads {
  private readonly ctrl = new Int32Array(new SharedArrayBuffer(4 * (SLOT.args + ARGS)));
  private readonly workers: Worker[];
  private readonly online: Promise<void>;

  /** T-1 threads besides the caller's. `script`: the compiled kernel-thread.js (tests pass dist's). */
  constructor(
    private readonly k: ProductKernels,
    memory: WebAssembly.Memory,
    flavour: SimdFlavour,
    readonly threads: number,
    script: URL = new URL('./kernel-thread.js', import.meta.url),
  ) {
    this.workers = Array.from(
      { length: threads - 1 },
      (_, j) => new Worker(script, { workerData: { memory, control: this.ctrl.buffer, index: j + 1, flavour } }),
    );
    this.online = Promise.all(this.workers.map((w) => new Promise<void>((resolve, reject) => w.once('online', resolve).once('error', reject)))).then(
      () => undefined,
    );
  }

  /** Resolves once every kernel thread runs. */
  ready(): Promise<void> {
    return this.online;
  }

  /** Y = X·Wᵀ + b, rows shared out. */
  linearForward(x: number, w: number, b: number, y: number, M: number, K: number, N: number): void {
    if (!this.split(M, GRAIN[OP.forward])) return this.k.linear_forward(x, w, b, y, M, K, N);
    this.run(OP.forward, [x, w, b, y, M, K, N]);
  }

  /** C = A·B with A's strides given (matmul_nn: ai = K·4, ak = 4; matmul_tn: ai = 4, ak = M·4), rows of C
   *  shared out. */
  product(a: number, ai: number, ak: number, b: number, c: number, M: number, N: number, K: number): void {
    if (!this.split(M, GRAIN[OP.product])) return this.k.product(a, ai, ak, b, c, M, N, K);
    this.run(OP.product, [a, ai, ak, b, c, M, N, K]);
  }

  close(): Promise<void> {
    return Promise.all(this.workers.map((w) => w.terminate())).then(() => undefined);
  }

  /** Worth sharing out: every thread gets at least a tile. */
  private split(M: number, grain: number): boolean {
    return this.threads > 1 && M >= grain * this.threads;
  }

  private run(op: number, args: number[]): void {
    const c = this.ctrl;
    c[SLOT.op] = op;
    c[SLOT.threads] = this.threads;
    c.set(args, SLOT.args);
    Atomics.store(c, SLOT.remaining, this.threads - 1);
    Atomics.add(c, SLOT.generation, 1);
    Atomics.notify(c, SLOT.generation);
    runShare(this.k, c, 0);
    const deadline = Date.now() + STALL_MS;
    for (let left = Atomics.load(c, SLOT.remaining); left !== 0; left = Atomics.load(c, SLOT.remaining)) {
      if (Date.now() > deadline) throw new Error(`kernel threads: ${left} of ${this.threads - 1} did not finish their share within ${STALL_MS} ms`);
      Atomics.wait(c, SLOT.remaining, left, 1000);
    }
  }
}
