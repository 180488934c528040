// An MLP laid out like torch.nn.Linear layers (weight (out, in) row-major, then bias), exact-erf GELU between
// layers, softmax cross-entropy with mean reduction. Pure compute: it knows nothing about ranks or shards.
import { crossEntropy, gelu, geluBackward, linearBackward, linearForward } from './ops.js';
import { Rng } from './rng.js';

export interface LayerSpec {
  index: number;
  inputs: number;
  outputs: number;
  offset: number; // where the layer's weight starts in the flat parameter vector; its bias follows it
  size: number; // outputs * inputs + outputs
}

export class MlpSpec {
  readonly layers: LayerSpec[];
  readonly params: number;

  constructor(readonly widths: readonly number[]) {
    if (widths.length < 2) throw new Error(`model: needs at least two widths (input and output), got ${widths.join(',')}`);
    if (widths.some((w) => !Number.isInteger(w) || w < 1)) throw new Error(`model: widths must be positive integers, got ${widths.join(',')}`);
    let offset = 0;
    this.layers = widths.slice(1).map((outputs, index) => {
      const inputs = widths[index];
      const layer = { index, inputs, outputs, offset, size: outputs * inputs + outputs };
      offset += layer.size;
      return layer;
    });
    this.params = offset;
  }

  get inputs(): number {
    return this.widths[0];
  }

  get classes(): number {
    return this.widths[this.widths.length - 1];
  }

  /** torch's default Linear init: weight and bias both U(-1/sqrt(in), 1/sqrt(in)). */
  init(seed: number): Float32Array {
    const rng = new Rng(seed);
    const theta = new Float32Array(this.params);
    for (const l of this.layers) {
      const bound = 1 / Math.sqrt(l.inputs);
      for (let i = 0; i < l.size; i++) theta[l.offset + i] = (2 * rng.uniform() - 1) * bound;
    }
    return theta;
  }
}

/** What one forward pass keeps for the backward pass: each layer's input and pre-activation. */
export interface Activations {
  rows: number;
  inputs: Float32Array[];
  pre: Float32Array[];
}

/** The forward and backward pass of one layer at a time, so a caller can fetch each layer's weights just in time. */
export class Mlp {
  constructor(readonly spec: MlpSpec) {}

  startForward(x: Float32Array, rows: number): Activations {
    if (x.length !== rows * this.spec.inputs) throw new RangeError(`input has ${x.length} values, expected ${rows} rows of ${this.spec.inputs}`);
    return { rows, inputs: [x], pre: [] };
  }

  /** Run layer `l` with its parameters `p` (weight then bias, fp32). Returns the layer's output. */
  forwardLayer(acts: Activations, l: number, p: Float32Array): Float32Array {
    const L = this.spec.layers[l];
    const x = acts.inputs[l];
    const pre = new Float32Array(acts.rows * L.outputs);
    linearForward(x, p.subarray(0, L.outputs * L.inputs), p.subarray(L.outputs * L.inputs, L.size), acts.rows, L.inputs, L.outputs, pre);
    acts.pre[l] = pre;
    if (l === this.spec.layers.length - 1) return pre;
    const out = new Float32Array(pre.length);
    gelu(pre, out);
    acts.inputs[l + 1] = out;
    return out;
  }

  /** Loss of the logits (the last layer's output) and the gradient that starts the backward pass. */
  loss(acts: Activations, labels: Int32Array): { loss: number; dOut: Float32Array } {
    const logits = acts.pre[this.spec.layers.length - 1];
    const dOut = new Float32Array(logits.length);
    return { loss: crossEntropy(logits, labels, acts.rows, this.spec.classes, dOut), dOut };
  }

  /** Backward through layer `l`: writes its parameter gradient into `grad` (weight then bias) and returns
   *  the gradient with respect to its input (null for the first layer). */
  backwardLayer(acts: Activations, l: number, p: Float32Array, dOut: Float32Array, grad: Float32Array): Float32Array | null {
    const L = this.spec.layers[l];
    if (l < this.spec.layers.length - 1) geluBackward(acts.pre[l], dOut);
    grad.fill(0);
    const dx = l > 0 ? new Float32Array(acts.rows * L.inputs) : null;
    const nw = L.outputs * L.inputs;
    linearBackward(acts.inputs[l], p.subarray(0, nw), dOut, acts.rows, L.inputs, L.outputs, grad.subarray(0, nw), grad.subarray(nw, L.size), dx);
    return dx;
  }
}
