// What the GPT and the Llama decoders share on a kernel arena: a batch of token rows laid out as named regions
// (activations, then scratch), the passes dispatched by unit (embeddings, a block, the head), the loss and
// its gradient, and the tensors of the loaded unit and its gradient as views. Each model supplies its regions
// and its six passes.
import { ArenaModel } from './arena-model.js';
import type { Elems } from '../tensor/dtype.js';
import { groupParts, loadedSize, type GroupParams, type NamedTensor, type ParamGroup } from './param-group.js';
import { crossEntropy } from './ops.js';
import { Rng } from './rng.js';
import { adaptedInit, adaptGroups, adapterAt, type Adaptation, type Adapter, type BaseGroup } from './adapters.js';
import { loraScratch, type LinearCall } from './lora-ops.js';

/** A unit of a decoder: its tensors, in the order they lie in the flat vector. */
export interface DecoderGroup extends ParamGroup {
  kind: 'embeddings' | 'block' | 'head';
  block: number; // the block's index, for kind 'block'
  tensors: NamedTensor[]; // its base tensors, then its adapters' lora_A and lora_B
  adapters: Adapter[];
}

type UnitList = [DecoderGroup['kind'], number, string, [string, number[]][]][];

/** A decoder's unit list: its embeddings' tensors, each of `layers` blocks' (named under `prefix(i)`), the
 *  head's; names as given (the embeddings' and the head's whole, the blocks' after their prefix). */
export function decoderUnits(
  embeddings: [string, number[]][],
  layers: number,
  prefix: (block: number) => string,
  block: [string, number[]][],
  head: [string, number[]][],
): UnitList {
  return [
    ['embeddings', -1, '', embeddings],
    ...Array.from({ length: layers }, (_, i): UnitList[number] => ['block', i, prefix(i), block]),
    ['head', -1, '', head],
  ];
}

/** The units laid out one after another, from (kind, block, name prefix, tensors) lists, each followed by
 *  its adapters: groups and their total, and the unadapted groups (what the base's init draws over). */
function decoderGroups(units: UnitList, adapt?: Adaptation): { groups: DecoderGroup[]; params: number; base: BaseGroup[] } {
  let offset = 0;
  const base = units.map(([kind, block, prefix, specs]): BaseGroup => {
    const tensors = specs.map(([name, shape]) => {
      const t = { name: `${prefix}${name}`, offset, shape };
      offset += shape.reduce((a, b) => a * b, 1);
      return t;
    });
    const isBlock = block >= 0; // the embeddings' and the head's are -1
    return { name: isBlock ? `blocks.${block}` : kind, tensors, linear: (t) => kind !== 'embeddings' && t.shape.length === 2, defaultTarget: isBlock };
  });
  const parts = adaptGroups(base, adapt);
  const groups = parts.map((p, index): DecoderGroup => {
    const [kind, block] = units[index];
    return { index, kind, block, offset: p.offset, size: p.size, frozen: p.frozen, tensors: p.tensors, adapters: p.adapters };
  });
  return { groups, params: groups.reduce((t, g) => t + g.size, 0), base };
}

/** A decoder's units and parameter count, laid out from its model's unit list; every tensor by name. */
export abstract class DecoderUnits {
  readonly layers: DecoderGroup[];
  readonly params: number;
  private readonly base: BaseGroup[];

  /** `tiedHead`: the head's weight as its passes name it, where the head is the token embeddings (the first
   *  tensor of the embeddings): borrowed from them (param-group.ts's Borrowed), not a parameter of its own. */
  constructor(
    units: UnitList,
    readonly adapt?: Adaptation,
    tiedHead?: string,
  ) {
    const { groups, params, base } = decoderGroups(units, adapt);
    if (tiedHead) {
      const [emb, head] = [groups[0], groups[groups.length - 1]];
      const table = emb.tensors[0];
      const size = table.shape.reduce((a, b) => a * b, 1);
      head.borrows = { from: emb.index, size, tensor: { name: tiedHead, offset: head.offset + head.size, shape: table.shape } };
    }
    this.layers = groups;
    this.params = params;
    this.base = base;
  }

  /** Bytes of the adapters' kept products for N tokens (what the passes add to the model's activations). */
  protected adapterActivationBytes(N: number, recompute: boolean): number {
    return 4 * Object.values(adapterRegions(this.layers, N, recompute)).reduce((t, n) => t + n, 0);
  }

  /** Every tensor with its torch (Hugging Face) name, offset and shape; adapters under PEFT's names. */
  tensors(): NamedTensor[] {
    return this.layers.flatMap((g) => g.tensors);
  }

  /** Initial weights from the seed, the torch way: tensors whose name `ones` matches start at 1, the other
   *  matrices N(0, 0.02) in the flat order from one generator, the rest (biases) at 0; adapters as
   *  adaptedInit says (the base the same with or without them). */
  protected initFrom(seed: number, ones: RegExp): Float32Array {
    const rng = new Rng(seed);
    const baseTensors = this.base.flatMap((g) => g.tensors);
    const last = baseTensors[baseTensors.length - 1];
    const theta = new Float32Array(last.offset + last.shape.reduce((a, b) => a * b, 1));
    for (const t of baseTensors) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      const view = theta.subarray(t.offset, t.offset + n);
      if (ones.test(t.name)) view.fill(1);
      else if (t.shape.length === 2) for (let i = 0; i < n; i++) view[i] = 0.02 * rng.normal();
    }
    if (!this.adapt) return theta;
    return adaptedInit(adaptGroups(this.base, this.adapt), this.params, theta, seed);
  }
}

/** Where the adapter k of group g keeps x·Aᵀ: per block (one block's with --recompute), per unit otherwise. */
function adapterRegion(g: DecoderGroup, k: number, recompute: boolean): string {
  if (g.kind !== 'block') return `la.u${g.index}.${k}`;
  return recompute ? `la.r.${k}` : `la.b${g.block}.${k}`;
}

/** The adapters' kept products for N tokens, N × r each, by region: counted with the activations. */
function adapterRegions(groups: readonly DecoderGroup[], N: number, recompute: boolean): Record<string, number> {
  const out: Record<string, number> = {};
  for (const g of groups) g.adapters.forEach((ad, k) => (out[adapterRegion(g, k, recompute)] = N * ad.rank));
  return out;
}

/** What a decoder's spec gives the passes: its units and the batch shape's sequence and vocabulary. */
interface DecoderSpec<G extends DecoderGroup> {
  readonly kind: string;
  readonly layers: G[];
  readonly shape: { seq: number; vocab: number };
}

/** Regions in elements: the activations (what the backward pass reads) and the scratch. */
export interface DecoderRegions {
  activations: Record<string, number>;
  scratch: Record<string, number>;
}

/** The views every decoder has: its unit's parameters and gradient, the running gradient, the loss's. */
type BaseViews = Record<'p' | 'g' | 'd' | 'dl' | 'logits', Float32Array>;

export abstract class Decoder<G extends DecoderGroup, V extends BaseViews> extends ArenaModel {
  protected rows = 0;
  protected tokens = new Int32Array(0);
  /** Views of every region, valid until the next layout (the arena's memory may grow then). */
  protected v = {} as V;
  /** Bytes the forward pass keeps for the backward pass (the activations), as laid out. */
  activationBytes = 0;
  /** `recompute`: activation checkpointing per block (keep each block's output; recompute its insides in the
   *  backward pass, one block at a time). */
  readonly recompute: boolean;

  constructor(
    readonly spec: DecoderSpec<G>,
    opts: { threads?: number; threadScript?: URL; recompute?: boolean } = {},
  ) {
    super(opts);
    this.recompute = opts.recompute ?? false;
  }

  protected get groups(): readonly G[] {
    return this.spec.layers;
  }

  protected abstract regions(rows: number): DecoderRegions;
  protected abstract embeddingsForward(): void;
  protected abstract embeddingsBackward(grad: Float32Array): void;
  protected abstract blockForward(g: G): void;
  protected abstract blockBackward(g: G): void;
  protected abstract headForward(g: G): void;
  protected abstract headBackward(g: G): void;

  /** A batch of `rows` sequences of T token ids (row-major). */
  start(tokens: ArrayLike<number>, rows: number): void {
    const { seq: T, vocab: V } = this.spec.shape;
    const name = this.spec.kind;
    if (tokens.length !== rows * T) throw new RangeError(`${name}: ${tokens.length} tokens, expected ${rows} sequences of ${T}`);
    if (rows !== this.rows) {
      const { activations, scratch } = this.regions(rows);
      Object.assign(activations, this.adapterActivations(rows * T));
      const all = { ...activations, ...scratch, ...loraScratch(this.adapters, rows * T, this.widest) };
      this.arena.layout(all);
      this.v = Object.fromEntries(Object.entries(all).map(([region, n]) => [region, this.arena.f32(region, n)])) as V;
      this.activationBytes = 4 * Object.values(activations).reduce((t, n) => t + n, 0);
      this.rows = rows;
      this.tokens = new Int32Array(rows * T);
    }
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (!(Number.isInteger(t) && t >= 0 && t < V)) throw new RangeError(`${name}: token ${t} at ${i} is not in 0..${V - 1}`);
      this.tokens[i] = t;
    }
  }

  /** Unit `u`'s forward pass with its parameters: its frozen prefix and its trainable rest (fp32, or bf16
   *  bits widened on the way in), loaded one after the other. */
  forward(u: number, given: Elems | GroupParams): void {
    const [g, params] = this.group(u, given);
    this.load(params);
    switch (g.kind) {
      case 'embeddings':
        return this.embeddingsForward();
      case 'block':
        return this.blockForward(g);
      default:
        return this.headForward(g);
    }
  }

  private load([frozen, trainable]: GroupParams): void {
    this.arena.load('p', frozen);
    this.arena.load('p', trainable, frozen.length);
  }

  /** Mean cross-entropy over every token; its gradient times `gradScale` starts the backward pass. */
  loss(targets: Int32Array, gradScale = 1): number {
    const dl = this.v.dl;
    const loss = crossEntropy(this.v.logits, targets, this.rows * this.spec.shape.seq, this.spec.shape.vocab, dl);
    if (gradScale !== 1) for (let i = 0; i < dl.length; i++) dl[i] *= gradScale;
    return loss;
  }

  /** Unit `u`'s backward pass: the gradient of its trainable part into `grad` (its size); the input gradient
   *  moves on. Frozen weights get no gradient computed (lora-ops.ts). */
  backward(u: number, given: Elems | GroupParams, grad: Float32Array): void {
    const [g, params] = this.group(u, given);
    const all = this.v.g.subarray(0, loadedSize(g));
    all.fill(0);
    switch (g.kind) {
      case 'embeddings':
        this.embeddingsBackward(all);
        break;
      case 'head':
        this.load(params);
        this.headBackward(g);
        break;
      default:
        this.load(params);
        this.blockBackward(g);
    }
    grad.set(all.subarray(g.frozen));
  }

  /** A Linear of group `g` whose weight (and bias) start at `w` (`b`) inside it, with its adapter if it has one. */
  protected linearCall(g: G, x: string, w: number, b: number | null, rows: number, inputs: number, outputs: number): LinearCall {
    const adapter = adapterAt(g.adapters, w);
    const k = adapter ? g.adapters.indexOf(adapter) : -1;
    return { x, w, b, rows, inputs, outputs, adapter, h: adapter && this.adapterRegion(g, k), frozen: g.frozen };
  }

  private adapterRegion(g: G, k: number): string {
    return adapterRegion(g, k, this.recompute);
  }

  private adapterActivations(N: number): Record<string, number> {
    return adapterRegions(this.groups, N, this.recompute);
  }

  private get adapters(): Adapter[] {
    return this.groups.flatMap((g) => g.adapters);
  }

  /** The widest Linear output (a missing bias reads that many zeros). */
  private get widest(): number {
    return Math.max(...this.groups.flatMap((g) => g.tensors.filter((t) => t.shape.length === 2).map((t) => t.shape[0])));
  }

  /** The logits of the last forward pass (N×V). */
  logits(): Float32Array {
    return this.v.logits;
  }

  private group(u: number, given: Elems | GroupParams): [G, GroupParams] {
    const g = this.spec.layers[u];
    if (!g) throw new RangeError(`${this.spec.kind}: unit ${u} does not exist`);
    const [frozen, trainable] = groupParts(g, given);
    if (frozen.length !== g.frozen || trainable.length !== loadedSize(g) - g.frozen)
      throw new RangeError(
        `${this.spec.kind}: unit ${u} has ${g.frozen} frozen and ${loadedSize(g) - g.frozen} trainable parameters${g.borrows ? ' (with those it borrows)' : ''}, got ${frozen.length} and ${trainable.length}`,
      );
    return [g, [frozen, trainable]];
  }

  /** Where the unit's tensor named `...name` starts inside the unit, in elements. */
  protected offset(g: G, name: string): number {
    return this.tensor(g, name).offset - g.offset;
  }

  /** The unit's tensor named `...name` in the loaded parameters ('p') or the gradient ('g'), as a view. */
  protected view(region: 'p' | 'g', g: G, name: string): Float32Array {
    const t = this.tensor(g, name);
    const at = t.offset - g.offset;
    return this.v[region].subarray(at, at + t.shape.reduce((a, b) => a * b, 1));
  }

  private tensor(g: G, name: string): NamedTensor {
    const all = g.borrows ? [...g.tensors, g.borrows.tensor] : g.tensors;
    const t = all.find((x) => x.name === name || x.name.endsWith(`.${name}`));
    if (!t) throw new Error(`${this.spec.kind}: unit ${g.index} has no tensor ${name}`);
    return t;
  }
}
