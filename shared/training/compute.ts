// Where a rank's forward and backward passes run. The scheme hands over one layer's fp32 parameters at a
// time and gets gradients back; activations stay with the compute. Inline runs on the calling thread;
// a worker thread (rank/compute-thread.ts) leaves the event loop free to move ring frames meanwhile,
// which is what lets ZeRO-3 prefetch overlap communication with compute.
import { Mlp, type Activations, type MlpSpec } from './mlp.js';

export interface Compute {
  start(x: Float32Array, rows: number): Promise<void>;
  forward(layer: number, params: Float32Array): Promise<void>;
  loss(labels: Int32Array): Promise<number>;
  /** Fills `grad` (the layer's size) with the layer's parameter gradient. */
  backward(layer: number, params: Float32Array, grad: Float32Array): Promise<void>;
  close(): Promise<void>;
}

/** Requests and replies between a rank and its compute thread. */
export type ComputeRequest =
  | { op: 'start'; x: Float32Array; rows: number }
  | { op: 'forward'; layer: number; params: Float32Array }
  | { op: 'loss'; labels: Int32Array }
  | { op: 'backward'; layer: number; params: Float32Array };
export type ComputeReply = { ok: true; loss?: number; grad?: Float32Array } | { ok: false; error: string };

/** The model's state between calls: the activations of the batch in flight and the gradient flowing back. */
export class ComputeState {
  private readonly mlp: Mlp;
  private acts: Activations | null = null;
  private d: Float32Array | null = null;

  constructor(spec: MlpSpec) {
    this.mlp = new Mlp(spec);
  }

  handle(req: ComputeRequest): ComputeReply {
    switch (req.op) {
      case 'start':
        this.acts = this.mlp.startForward(req.x, req.rows);
        return { ok: true };
      case 'forward':
        this.mlp.forwardLayer(this.need(), req.layer, req.params);
        return { ok: true };
      case 'loss': {
        const { loss, dOut } = this.mlp.loss(this.need(), req.labels);
        this.d = dOut;
        return { ok: true, loss };
      }
      case 'backward': {
        const grad = new Float32Array(this.mlp.spec.layers[req.layer].size);
        this.d = this.mlp.backwardLayer(this.need(), req.layer, req.params, this.d!, grad);
        return { ok: true, grad };
      }
    }
  }

  private need(): Activations {
    if (!this.acts) throw new Error('compute: no batch started');
    return this.acts;
  }
}

/** Compute on the calling thread. */
export class InlineCompute implements Compute {
  private readonly state: ComputeState;

  constructor(spec: MlpSpec) {
    this.state = new ComputeState(spec);
  }

  async start(x: Float32Array, rows: number): Promise<void> {
    this.state.handle({ op: 'start', x, rows });
  }

  async forward(layer: number, params: Float32Array): Promise<void> {
    this.state.handle({ op: 'forward', layer, params });
  }

  async loss(labels: Int32Array): Promise<number> {
    const r = this.state.handle({ op: 'loss', labels });
    return r.ok ? r.loss! : NaN;
  }

  async backward(layer: number, params: Float32Array, grad: Float32Array): Promise<void> {
    const r = this.state.handle({ op: 'backward', layer, params });
    if (r.ok) grad.set(r.grad!);
  }

  async close(): Promise<void> {}
}
