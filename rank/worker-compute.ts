// Compute on a worker thread: while it runs a layer, the rank's event loop keeps serving the ring.
import { Worker } from 'node:worker_threads';
import type { Compute, ComputeReply, ComputeRequest } from '../shared/training/compute.js';
import type { Elems } from '../shared/tensor/dtype.js';
import type { MlpSpec } from '../shared/training/mlp.js';

export class WorkerCompute implements Compute {
  private readonly worker: Worker;
  private pending: { resolve: (r: ComputeReply) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;
  /** The thread's kernel arena, as it reported when the batch started. */
  arenaBytes = 0;

  /** `script` is the thread's compiled entry point (tests running this file from source pass dist's). */
  constructor(spec: MlpSpec, script: URL = new URL('./compute-thread.js', import.meta.url)) {
    this.worker = new Worker(script, { workerData: { widths: spec.widths } });
    this.worker.on('message', (r: ComputeReply) => {
      const p = this.pending;
      this.pending = null;
      p?.resolve(r);
    });
    const fail = (err: Error) => {
      this.failure = err;
      this.pending?.reject(err);
      this.pending = null;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`compute thread exited (${code})`)));
  }

  /** One request at a time; inputs are copied into fresh buffers that move to the thread. */
  private call(req: ComputeRequest, transfer: ArrayBuffer[]): Promise<ComputeReply> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending) return Promise.reject(new Error('compute: a request is already running'));
    return new Promise<ComputeReply>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(req, transfer);
    }).then((r) => {
      if (!r.ok) throw new Error(`compute thread: ${r.error}`);
      return r;
    });
  }

  async start(x: Float32Array, rows: number): Promise<void> {
    const copy = x.slice();
    const r = await this.call({ op: 'start', x: copy, rows }, [copy.buffer]);
    if (r.ok) this.arenaBytes = r.arenaBytes ?? 0;
  }

  async forward(layer: number, params: Elems): Promise<void> {
    const copy = params.slice();
    await this.call({ op: 'forward', layer, params: copy }, [copy.buffer]);
  }

  async loss(labels: Int32Array, gradScale: number): Promise<number> {
    const copy = labels.slice();
    const r = await this.call({ op: 'loss', labels: copy, gradScale }, [copy.buffer]);
    return r.ok ? r.loss! : NaN;
  }

  async backward(layer: number, params: Elems, grad: Float32Array): Promise<void> {
    const copy = params.slice();
    const r = await this.call({ op: 'backward', layer, params: copy }, [copy.buffer]);
    if (r.ok) grad.set(r.grad!);
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
