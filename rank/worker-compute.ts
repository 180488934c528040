// Compute on a worker thread: while it runs a layer, the rank's event loop keeps serving the ring. Tensors
// cross to the thread through shared staging memory made once (a layer's parameters and gradient) or when
// a larger batch arrives (its inputs and labels), never through a fresh copy per message; the requests
// themselves carry only what to do.
import { Worker } from 'node:worker_threads';
import { loadedSize, type GroupParams } from '../shared/training/param-group.js';
import type { Compute } from '../shared/training/compute.js';
import { batchRow, modelConfig, type ModelSpec } from '../shared/models/registry.js';

/** Requests from a rank to its compute thread; every one is answered with a ThreadReply. */
export type ThreadRequest =
  | { op: 'staging'; layer: SharedArrayBuffer; batch: SharedArrayBuffer }
  | { op: 'start'; rows: number }
  | { op: 'forward'; layer: number; bf16: boolean }
  | { op: 'loss'; gradScale: number }
  | { op: 'backward'; layer: number; bf16: boolean };
export type ThreadReply = { ok: true; loss?: number; arenaBytes?: number; activationBytes?: number } | { ok: false; error: string };

/** The layer staging: parameters (fp32, or bf16 bits in its first half) at 0, the gradient after them. */
export const layerStaging = (buf: SharedArrayBuffer, largest: number) => ({
  f32: new Float32Array(buf, 0, largest),
  bf16: new Uint16Array(buf, 0, largest),
  grad: new Float32Array(buf, largest * 4, largest),
});

/** The batch staging: inputs (rows x inputs fp32), then labels (rows x labels). */
export const batchStaging = (buf: SharedArrayBuffer, row: { inputs: number; labels: number }, rows: number) => ({
  x: new Float32Array(buf, 0, rows * row.inputs),
  y: new Int32Array(buf, rows * row.inputs * 4, rows * row.labels),
});

export class WorkerCompute implements Compute {
  private readonly worker: Worker;
  private pending: { resolve: (r: ThreadReply) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;
  private readonly largest: number;
  private readonly layerBuf: SharedArrayBuffer;
  private batchBuf = new SharedArrayBuffer(0);
  private rows = 0;
  private threadArena = 0;
  private threadActivations = 0;

  /** `script` is the thread's compiled entry point (tests running this file from source pass dist's). */
  constructor(
    private readonly spec: ModelSpec,
    threads = 1,
    script: URL = new URL('./compute-thread.js', import.meta.url),
    recompute = false,
  ) {
    this.largest = Math.max(...spec.layers.map(loadedSize));
    this.layerBuf = new SharedArrayBuffer(this.largest * 8);
    this.worker = new Worker(script, { workerData: { ...modelConfig(spec), threads, recompute } });
    this.worker.on('message', (r: ThreadReply) => {
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

  /** The thread's kernel arena and the staging both sides share. */
  get arenaBytes(): number {
    return this.threadArena + this.layerBuf.byteLength + this.batchBuf.byteLength;
  }

  /** Of the thread's arena, the activations, as the thread's model laid them out. */
  get activationBytes(): number {
    return this.threadActivations;
  }

  /** The thread's kernel arena: a WebAssembly memory of the worker's, invisible to this thread's counters. */
  get otherThreadBytes(): number {
    return this.threadArena;
  }

  /** One request at a time. */
  private call(req: ThreadRequest): Promise<ThreadReply> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending) return Promise.reject(new Error('compute: a request is already running'));
    return new Promise<ThreadReply>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(req);
    }).then((r) => {
      if (!r.ok) throw new Error(`compute thread: ${r.error}`);
      return r;
    });
  }

  async start(x: Float32Array, rows: number): Promise<void> {
    const row = batchRow(this.spec);
    const need = rows * (row.inputs + row.labels) * 4;
    if (need > this.batchBuf.byteLength) {
      this.batchBuf = new SharedArrayBuffer(need);
      await this.call({ op: 'staging', layer: this.layerBuf, batch: this.batchBuf });
    }
    this.rows = rows;
    batchStaging(this.batchBuf, row, rows).x.set(x);
    const r = await this.call({ op: 'start', rows });
    if (r.ok) {
      this.threadArena = r.arenaBytes ?? 0;
      this.threadActivations = r.activationBytes ?? 0;
    }
  }

  async forward(layer: number, params: GroupParams): Promise<void> {
    await this.call({ op: 'forward', layer, bf16: this.stage(params) });
  }

  async loss(labels: Int32Array, gradScale: number): Promise<number> {
    batchStaging(this.batchBuf, batchRow(this.spec), this.rows).y.set(labels);
    const r = await this.call({ op: 'loss', gradScale });
    return r.ok ? r.loss! : NaN;
  }

  async backward(layer: number, params: GroupParams, grad: Float32Array): Promise<void> {
    await this.call({ op: 'backward', layer, bf16: this.stage(params) });
    grad.set(layerStaging(this.layerBuf, this.largest).grad.subarray(0, grad.length));
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  /** Copy a layer's parameters into the staging, its frozen prefix then its trainable rest (the layer in the
   *  model's order); true when they are bf16 bits. */
  private stage([frozen, trainable]: GroupParams): boolean {
    const s = layerStaging(this.layerBuf, this.largest);
    const to = frozen instanceof Float32Array ? s.f32 : s.bf16;
    to.set(frozen);
    to.set(trainable, frozen.length);
    return !(frozen instanceof Float32Array);
  }
}
