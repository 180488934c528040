// An MLP laid out like torch.nn.Linear layers (weight (out, in) row-major, then bias), exact-erf GELU between
// layers, softmax cross-entropy with mean reduction. Pure compute: it knows nothing about ranks or shards.
import { ArenaModel } from '../../training/arena-model.js';
import { crossEntropy } from '../../training/ops.js';
import { arenaGelu, arenaGeluBackward } from '../../training/activations.js';
import { groupParts, type GroupParams, type NamedTensor, type ParamGroup } from '../../training/param-group.js';
import { Rng } from '../../training/rng.js';
import type { Elems } from '../../tensor/dtype.js';
import { adaptedInit, adaptGroups, type Adaptation, type Adapter, type AdaptedParts, type BaseGroup } from '../../training/adapters.js';
import { linearBackward, linearForward, loraScratch, type LinearCall } from '../../training/lora-ops.js';

export interface LayerSpec extends ParamGroup {
  inputs: number;
  outputs: number;
  adapters: Adapter[]; // none, or the one on its weight
  tensors: NamedTensor[]; // weight (out, in), bias, then its adapter's lora_A and lora_B
  // offset: where the layer's weight starts; its bias follows it, then its adapter. size: all of them
}

export class MlpSpec {
  readonly kind = 'mlp' as const;
  readonly layers: LayerSpec[];
  readonly params: number;

  private readonly parts: AdaptedParts[];

  constructor(
    readonly widths: readonly number[],
    readonly adapt?: Adaptation,
  ) {
    if (widths.length < 2) throw new Error(`model: needs at least two widths (input and output), got ${widths.join(',')}`);
    if (widths.some((w) => !Number.isInteger(w) || w < 1)) throw new Error(`model: widths must be positive integers, got ${widths.join(',')}`);
    let offset = 0;
    const base = widths.slice(1).map((outputs, index): BaseGroup => {
      const inputs = widths[index];
      const tensors = [
        { name: `layers.${index}.weight`, offset, shape: [outputs, inputs] },
        { name: `layers.${index}.bias`, offset: offset + outputs * inputs, shape: [outputs] },
      ];
      offset += outputs * inputs + outputs;
      return { name: `layers.${index}`, tensors, linear: (t) => t.shape.length === 2, defaultTarget: true };
    });
    this.parts = adaptGroups(base, adapt);
    this.layers = this.parts.map((p, index) => {
      const [outputs, inputs] = p.tensors[0].shape;
      return { index, inputs, outputs, offset: p.offset, size: p.size, frozen: p.frozen, adapters: p.adapters, tensors: p.tensors };
    });
    this.params = this.parts.reduce((t, p) => t + p.size, 0);
    this.baseParams = offset;
  }

  private readonly baseParams: number;

  get inputs(): number {
    return this.widths[0];
  }

  get classes(): number {
    return this.widths[this.widths.length - 1];
  }

  /** Every tensor with its torch name (layers.i.weight (out, in), layers.i.bias; adapters as PEFT names
   *  them: layers.i.lora_A.weight), offset and shape. */
  tensors(): NamedTensor[] {
    return this.layers.flatMap((l) => l.tensors);
  }

  describe(): string {
    return this.widths.join(',');
  }

  /** Bytes the forward pass keeps for the backward pass for `rows` rows: each layer's input and
   *  pre-activation. (No checkpointing for an MLP: `_recompute` is the GPT's, refused by the run config.) */
  activationBytes(rows: number, _recompute = false): number {
    return 4 * rows * this.layers.reduce((t, l) => t + l.inputs + l.outputs + (l.adapters[0]?.rank ?? 0), 0);
  }

  /** torch's default Linear init: weight and bias both U(-1/sqrt(in), 1/sqrt(in)). */
  init(seed: number): Float32Array {
    const rng = new Rng(seed);
    const theta = new Float32Array(this.baseParams);
    for (const p of this.parts) {
      const bound = 1 / Math.sqrt(p.tensors[0].shape[1]);
      for (let i = 0; i < p.baseSize; i++) theta[p.baseOffset + i] = (2 * rng.uniform() - 1) * bound;
    }
    return this.adapt ? adaptedInit(this.parts, this.params, theta, seed) : theta;
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
      for (const l of this.spec.layers) for (const ad of l.adapters) regions[`la${l.index}`] = rows * ad.rank;
      const widest = Math.max(...this.spec.widths);
      const largest = Math.max(...this.spec.layers.map((l) => l.size));
      this.activationBytes = 4 * Object.values(regions).reduce((t, n) => t + n, 0);
      const adapters = this.spec.layers.flatMap((l) => l.adapters);
      Object.assign(regions, { p: largest, g: largest, d: rows * widest, dx: rows * widest, ...loraScratch(adapters, rows, widest) });
      this.arena.layout(regions);
      this.rows = rows;
    }
    this.arena.f32('in0', x.length).set(x);
  }

  /** Run layer `l` with its parameters (weight, bias, its adapter; fp32, or bf16 bits widened on the way). */
  forward(l: number, given: Elems | GroupParams): void {
    const [L, params] = this.layer(l, given);
    const a = this.arena;
    this.load(params);
    linearForward(a, this.call(L), `pre${l}`);
    if (l < this.spec.layers.length - 1) arenaGelu(a, this.pre(l), a.f32(`in${l + 1}`, this.rows * L.outputs));
  }

  private load([frozen, trainable]: GroupParams): void {
    this.arena.load('p', frozen);
    this.arena.load('p', trainable, frozen.length);
  }

  private call(L: LayerSpec): LinearCall {
    const { index, inputs, outputs, adapters, frozen } = L;
    return { x: `in${index}`, w: 0, b: outputs * inputs, rows: this.rows, inputs, outputs, adapter: adapters[0], h: `la${index}`, frozen };
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

  /** Backward through layer `l`: the gradient of its trainable part (weight then bias, then its adapter's A
   *  and B) into `grad`; the gradient with respect to its input goes on to layer l-1. */
  backward(l: number, given: Elems | GroupParams, grad: Float32Array): void {
    const [L, params] = this.layer(l, given);
    const a = this.arena;
    const rows = this.rows;
    if (l < this.spec.layers.length - 1) arenaGeluBackward(a, this.pre(l), a.f32(`in${l + 1}`, rows * L.outputs), a.f32(this.dIn, rows * L.outputs));
    if (l > 0 || L.adapters.length) this.load(params); // the first layer's weight gradient needs no weights
    linearBackward(a, this.call(L), this.dIn, l === 0 ? null : this.dOut);
    grad.set(a.f32('g', L.size).subarray(L.frozen));
    if (l > 0) [this.dIn, this.dOut] = [this.dOut, this.dIn];
  }

  private layer(l: number, given: Elems | GroupParams): [LayerSpec, GroupParams] {
    const L = this.spec.layers[l];
    if (!L) throw new RangeError(`layer ${l} is not a layer of ${this.spec.widths.join(',')}`);
    const params = groupParts(L, given);
    if (params[0].length + params[1].length < L.size) throw new RangeError(`layer ${l} needs ${L.size} parameters, got ${params[0].length + params[1].length}`);
    return [L, params];
  }
}
