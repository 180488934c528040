// Where a rank's forward and backward passes run. The scheme hands over one layer's fp32 parameters at a
// time and gets gradients back; activations stay with the compute. Inline runs on the calling thread;
// a worker thread (rank/compute-thread.ts) leaves the event loop free to move ring frames meanwhile,
// which is what lets ZeRO-3 prefetch overlap communication with compute.
import type { Elems } from '../tensor/dtype.js';
import { Mlp, type MlpSpec } from './mlp.js';

export interface Compute {
  start(x: Float32Array, rows: number): Promise<void>;
  /** `params`: the layer's weight then bias, fp32 or bf16 bits (widened inside the compute). */
  forward(layer: number, params: Elems): Promise<void>;
  /** The mean loss of this rank's rows; the gradient that starts the backward pass is scaled by
   *  `gradScale` (1/N: the sum over ranks is then the gradient of the global mean loss). */
  loss(labels: Int32Array, gradScale: number): Promise<number>;
  /** Bytes the compute's kernel arena holds (known once a batch has started). */
  readonly arenaBytes: number;
  /** Fills `grad` (the layer's size) with the layer's parameter gradient. */
  backward(layer: number, params: Elems, grad: Float32Array): Promise<void>;
  close(): Promise<void>;
}

/** Requests and replies between a rank and its compute thread. */
export type ComputeRequest =
  | { op: 'start'; x: Float32Array; rows: number }
  | { op: 'forward'; layer: number; params: Elems }
  | { op: 'loss'; labels: Int32Array; gradScale: number }
  | { op: 'backward'; layer: number; params: Elems };
export type ComputeReply = { ok: true; loss?: number; grad?: Float32Array; arenaBytes?: number } | { ok: false; error: string };

/** The model between calls: the batch in flight lives in the model's kernel arena. */
export class ComputeState {
  readonly mlp: Mlp;
  private started = false;

  constructor(spec: MlpSpec) {
    this.mlp = new Mlp(spec);
  }

  handle(req: ComputeRequest): ComputeReply {
    switch (req.op) {
      case 'start':
        this.mlp.start(req.x, req.rows);
        this.started = true;
        return { ok: true, arenaBytes: this.mlp.bytes };
      case 'forward':
        this.need().forward(req.layer, req.params);
        return { ok: true };
      case 'loss':
        return { ok: true, loss: this.need().loss(req.labels, req.gradScale) };
      case 'backward': {
        const grad = new Float32Array(this.mlp.spec.layers[req.layer].size);
        this.need().backward(req.layer, req.params, grad);
        return { ok: true, grad };
      }
    }
  }

  private need(): Mlp {
    if (!this.started) throw new Error('compute: no batch started');
    return this.mlp;
  }
}

/** Compute on the calling thread: the model writes each gradient straight into the caller's array. */
export class InlineCompute implements Compute {
  readonly mlp: Mlp;

  constructor(spec: MlpSpec) {
    this.mlp = new Mlp(spec);
  }

  async start(x: Float32Array, rows: number): Promise<void> {
    this.mlp.start(x, rows);
  }

  async forward(layer: number, params: Elems): Promise<void> {
    this.mlp.forward(layer, params);
  }

  async loss(labels: Int32Array, gradScale: number): Promise<number> {
    return this.mlp.loss(labels, gradScale);
  }

  get arenaBytes(): number {
    return this.mlp.bytes;
  }

  async backward(layer: number, params: Elems, grad: Float32Array): Promise<void> {
    this.mlp.backward(layer, params, grad);
  }

  async close(): Promise<void> {}
}
