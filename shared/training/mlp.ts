// An MLP laid out like torch.nn.Linear layers (weight (out, in) row-major, then bias), exact-erf GELU between
// layers, softmax cross-entropy with mean reduction. Pure compute: it knows nothing about ranks or shards.
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

// erf with |relative error| < 1.2e-7 (Numerical Recipes' Chebyshev fit of erfc); exact enough for fp32.
export function erf(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - r : r - 1;
}

const INV_SQRT2 = Math.SQRT1_2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

/** out = x W^T + b for `rows` rows; W is (outputs, inputs) row-major. */
export function linearForward(x: Float32Array, w: Float32Array, b: Float32Array, rows: number, inputs: number, outputs: number, out: Float32Array): void {
  for (let r = 0; r < rows; r++) {
    const xo = r * inputs;
    for (let o = 0; o < outputs; o++) {
      const wo = o * inputs;
      let s = 0;
      for (let i = 0; i < inputs; i++) s += x[xo + i] * w[wo + i];
      out[r * outputs + o] = s + b[o];
    }
  }
}

/** Given dOut (rows, outputs): gw += dOut^T x, gb += sum of dOut rows, and (if dx) dx = dOut W. */
export function linearBackward(x: Float32Array, w: Float32Array, dOut: Float32Array, rows: number, inputs: number, outputs: number, gw: Float32Array, gb: Float32Array, dx: Float32Array | null): void {
  for (let r = 0; r < rows; r++) {
    const xo = r * inputs;
    for (let o = 0; o < outputs; o++) {
      const g = dOut[r * outputs + o];
      if (g === 0) continue;
      gb[o] += g;
      const wo = o * inputs;
      for (let i = 0; i < inputs; i++) gw[wo + i] += g * x[xo + i];
    }
  }
  if (!dx) return;
  dx.fill(0);
  for (let r = 0; r < rows; r++) {
    const xo = r * inputs;
    for (let o = 0; o < outputs; o++) {
      const g = dOut[r * outputs + o];
      if (g === 0) continue;
      const wo = o * inputs;
      for (let i = 0; i < inputs; i++) dx[xo + i] += g * w[wo + i];
    }
  }
}

export function gelu(pre: Float32Array, out: Float32Array): void {
  for (let i = 0; i < pre.length; i++) {
    const v = pre[i];
    out[i] = 0.5 * v * (1 + erf(v * INV_SQRT2));
  }
}

/** d(gelu)/d(pre) applied to the incoming gradient, in place: g *= Phi(x) + x phi(x). */
export function geluBackward(pre: Float32Array, g: Float32Array): void {
  for (let i = 0; i < pre.length; i++) {
    const v = pre[i];
    g[i] *= 0.5 * (1 + erf(v * INV_SQRT2)) + v * INV_SQRT_2PI * Math.exp(-0.5 * v * v);
  }
}

/** Mean softmax cross-entropy over rows, and its gradient with respect to the logits. */
export function crossEntropy(logits: Float32Array, labels: Int32Array, rows: number, classes: number, dLogits: Float32Array): number {
  let total = 0;
  for (let r = 0; r < rows; r++) {
    const o = r * classes;
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, logits[o + c]);
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += Math.exp(logits[o + c] - max);
    const logSum = Math.log(sum) + max;
    const y = labels[r];
    if (!(y >= 0 && y < classes)) throw new RangeError(`label ${y} at row ${r} is not a class in 0..${classes - 1}`);
    total += logSum - logits[o + y];
    for (let c = 0; c < classes; c++) dLogits[o + c] = (Math.exp(logits[o + c] - logSum) - (c === y ? 1 : 0)) / rows;
  }
  return total / rows;
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
