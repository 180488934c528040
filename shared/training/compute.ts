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
  loss(labels: Int32Array): Promise<number>;
  /** Fills `grad` (the layer's size) with the layer's parameter gradient. */
  backward(layer: number, params: Elems, grad: Float32Array): Promise<void>;
  close(): Promise<void>;
}

/** Requests and replies between a rank and its compute thread. */
export type ComputeRequest =
  | { op: 'start'; x: Float32Array; rows: number }
  | { op: 'forward'; layer: number; params: Elems }
  | { op: 'loss'; labels: Int32Array }
  | { op: 'backward'; layer: number; params: Elems };
export type ComputeReply = { ok: true; loss?: number; grad?: Float32Array } | { ok: false; error: string };

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
        return { ok: true };
      case 'forward':
        this.need().forward(req.layer, req.params);
        return { ok: true };
      case 'loss':
        return { ok: true, loss: this.need().loss(req.labels) };
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

  async loss(labels: Int32Array): Promise<number> {
    return this.mlp.loss(labels);
  }

  async backward(layer: number, params: Elems, grad: Float32Array): Promise<void> {
    this.mlp.backward(layer, params, grad);
  }

  async close(): Promise<void> {}
}
