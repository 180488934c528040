// An MLP laid out like torch.nn.Linear layers (weight (out, in) row-major, then bias), exact-erf GELU between
// layers, softmax cross-entropy with mean reduction. Pure compute: it knows nothing about ranks or shards.
import { ArenaModel } from './arena-model.js';
import { crossEntropy } from './ops.js';
import { arenaGelu, arenaGeluBackward } from './activations.js';
import type { NamedTensor, ParamGroup } from './param-group.js';
import { Rng } from './rng.js';

export interface LayerSpec extends ParamGroup {
  inputs: number;
  outputs: number;
  // offset: where the layer's weight starts; its bias follows it. size: outputs * inputs + outputs
}

export class MlpSpec {
  readonly kind = 'mlp' as const;
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

  /** Every tensor with its torch name (layers.i.weight (out, in), layers.i.bias), offset and shape. */
  tensors(): NamedTensor[] {
    return this.layers.flatMap((l) => [
      { name: `layers.${l.index}.weight`, offset: l.offset, shape: [l.outputs, l.inputs] },
      { name: `layers.${l.index}.bias`, offset: l.offset + l.outputs * l.inputs, shape: [l.outputs] },
    ]);
  }

  describe(): string {
    return this.widths.join(',');
  }

  /** Bytes the forward pass keeps for the backward pass for `rows` rows: each layer's input and
   *  pre-activation. (No checkpointing for an MLP: `_recompute` is the GPT's, refused by the run config.) */
  activationBytes(rows: number, _recompute = false): number {
    return 4 * rows * this.layers.reduce((t, l) => t + l.inputs + l.outputs, 0);
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

/**
 * The forward and backward pass of one layer at a time, so a caller can fetch each layer's weights just in
 * time. The products run in WebAssembly SIMD kernels (tensor/wasm/matmul.wat) on a kernel arena that holds
 * what a batch needs, sized once per batch shape: each layer's input and pre-activation (what the backward
 * pass reads), one layer's parameters and gradient, and the gradient flowing back. GELU and the loss run in
 * JavaScript on views of the same memory.
 */
export class Mlp extends ArenaModel {
  private rows = 0;
  private dIn = 'd'; // the region holding the gradient w.r.t. the current layer's output
  private dOut = 'dx';

  constructor(
    readonly spec: MlpSpec,
    opts: { threads?: number; threadScript?: URL } = {},
  ) {
    super(opts);
  }

  protected get groups(): readonly LayerSpec[] {
    return this.spec.layers;
  }

  /** Of the arena, the activations of the current batch: the in* and pre* regions it laid out. */
  activationBytes = 0;

  /** A new batch of `rows` rows (row-major, `inputs` values each). */
  start(x: ArrayLike<number>, rows: number): void {
    if (x.length !== rows * this.spec.inputs) throw new RangeError(`input has ${x.length} values, expected ${rows} rows of ${this.spec.inputs}`);
    if (rows !== this.rows) {
      const regions: Record<string, number> = {};
      for (const l of this.spec.layers) {
        regions[`in${l.index}`] = rows * l.inputs;
        regions[`pre${l.index}`] = rows * l.outputs;
      }
      const widest = Math.max(...this.spec.widths);
      const largest = Math.max(...this.spec.layers.map((l) => l.size));
      this.activationBytes = 4 * Object.values(regions).reduce((t, n) => t + n, 0);
      Object.assign(regions, { p: largest, g: largest, d: rows * widest, dx: rows * widest });
      this.arena.layout(regions);
      this.rows = rows;
    }
    this.arena.f32('in0', x.length).set(x);
  }

  /** Run layer `l` with its parameters `p` (weight then bias; fp32, or bf16 bits widened on the way). */
  forward(l: number, p: Float32Array | Uint16Array): void {
    const L = this.layer(l, p);
    const a = this.arena;
    a.load('p', p);
    a.linearForward(a.at(`in${l}`), a.at('p'), a.at('p') + L.outputs * L.inputs * 4, a.at(`pre${l}`), this.rows, L.inputs, L.outputs);
    if (l < this.spec.layers.length - 1) arenaGelu(a, this.pre(l), a.f32(`in${l + 1}`, this.rows * L.outputs));
  }

  /** Layer `l`'s pre-activation of the current batch (a view, valid until the next start()). */
  pre(l: number): Float32Array {
    return this.arena.f32(`pre${l}`, this.rows * this.spec.layers[l].outputs);
  }

  /** Mean cross-entropy of the logits (the last layer's output); its gradient, times `gradScale`, starts
   *  the backward pass. */
  loss(labels: Int32Array, gradScale = 1): number {
    const last = this.spec.layers.length - 1;
    this.dIn = 'd';
    this.dOut = 'dx';
    const d = this.arena.f32('d', this.rows * this.spec.classes);
    const loss = crossEntropy(this.pre(last), labels, this.rows, this.spec.classes, d);
    if (gradScale !== 1) for (let i = 0; i < d.length; i++) d[i] *= gradScale;
    return loss;
  }

  /** Backward through layer `l`: its parameter gradient (weight then bias) into `grad`; the gradient with
   *  respect to its input goes on to layer l-1. */
  backward(l: number, p: Float32Array | Uint16Array, grad: Float32Array): void {
    const L = this.layer(l, p);
    const a = this.arena;
    const rows = this.rows;
    if (l < this.spec.layers.length - 1) arenaGeluBackward(a, this.pre(l), a.f32(`in${l + 1}`, rows * L.outputs), a.f32(this.dIn, rows * L.outputs));
    const nw = L.outputs * L.inputs;
    a.matmulTN(a.at(this.dIn), a.at(`in${l}`), a.at('g'), L.outputs, L.inputs, rows); // dW = dYᵀ·X
    a.k.colsum(a.at(this.dIn), a.at('g') + nw * 4, rows, L.outputs); // db = Σ rows of dY
    grad.set(a.f32('g', L.size));
    if (l === 0) return;
    a.load('p', p);
    a.matmulNN(a.at(this.dIn), a.at('p'), a.at(this.dOut), rows, L.inputs, L.outputs); // dX = dY·W
    [this.dIn, this.dOut] = [this.dOut, this.dIn];
  }

  private layer(l: number, p: Float32Array | Uint16Array): LayerSpec {
    const L = this.spec.layers[l];
    if (!L) throw new RangeError(`layer ${l} is not a layer of ${this.spec.widths.join(',')}`);
    if (p.length < L.size) throw new RangeError(`layer ${l} needs ${L.size} parameters, got ${p.length}`);
    return L;
  }
}
