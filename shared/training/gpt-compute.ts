// The GPT's forward and backward passes, one unit at a time (embeddings, a block, ln_f + head), so a
// scheme can hand over each unit's parameters just in time, as for the MLP. What the forward pass keeps
// for the backward pass is laid out as named activation regions per batch shape and counted
// (activationBytes); the rest of the arena is scratch.
import { ArenaModel } from './arena-model.js';
import type { Elems } from '../tensor/dtype.js';
import type { Compute } from './compute.js';
import type { GptGroup, GptSpec } from './gpt.js';
import { crossEntropy, gelu, geluBackward } from './ops.js';

const EPS = 1e-5;

/** LayerNorm over rows of width D: out = (x - mean) * rstd * w + b; keeps mean and rstd. */
function layerNorm(x: Float32Array, w: Float32Array, b: Float32Array, N: number, D: number, out: Float32Array, stats: Float32Array): void {
  for (let n = 0; n < N; n++) {
    const o = n * D;
    let mean = 0;
    for (let i = 0; i < D; i++) mean += x[o + i];
    mean /= D;
    let v = 0;
    for (let i = 0; i < D; i++) v += (x[o + i] - mean) ** 2;
    const rstd = 1 / Math.sqrt(v / D + EPS);
    stats[2 * n] = mean;
    stats[2 * n + 1] = rstd;
    for (let i = 0; i < D; i++) out[o + i] = (x[o + i] - mean) * rstd * w[i] + b[i];
  }
}

/** LayerNorm backward: dw, db accumulate; dx += the input gradient. */
function layerNormBackward(
  x: Float32Array,
  w: Float32Array,
  stats: Float32Array,
  dy: Float32Array,
  N: number,
  D: number,
  dw: Float32Array,
  db: Float32Array,
  dx: Float32Array,
): void {
  for (let n = 0; n < N; n++) {
    const o = n * D;
    const mean = stats[2 * n];
    const rstd = stats[2 * n + 1];
    let sumG = 0;
    let sumGX = 0;
    for (let i = 0; i < D; i++) {
      const xhat = (x[o + i] - mean) * rstd;
      const g = dy[o + i] * w[i];
      dw[i] += dy[o + i] * xhat;
      db[i] += dy[o + i];
      sumG += g;
      sumGX += g * xhat;
    }
    sumG /= D;
    sumGX /= D;
    for (let i = 0; i < D; i++) {
      const xhat = (x[o + i] - mean) * rstd;
      dx[o + i] += rstd * (dy[o + i] * w[i] - sumG - xhat * sumGX);
    }
  }
}

interface BlockActs {
  ln1: Float32Array;
  st1: Float32Array;
  qkv: Float32Array;
  P: Float32Array;
  y: Float32Array;
  xmid: Float32Array;
  ln2: Float32Array;
  st2: Float32Array;
  hpre: Float32Array;
  hact: Float32Array;
  out: Float32Array; // the block's output: the next unit's input
}
type BlockName = keyof BlockActs;

/** The regions of one batch shape: activations first (what the backward pass reads), then scratch. */
function regions(spec: GptSpec, rows: number, recompute: boolean): { activations: Record<string, number>; scratch: Record<string, number> } {
  const { dim: D, heads: H, seq: T, vocab: V, layers: L } = spec.shape;
  const N = rows * T;
  const block: Record<BlockName, number> = {
    ln1: N * D,
    st1: 2 * N,
    qkv: 3 * N * D,
    P: rows * H * T * T,
    y: N * D,
    xmid: N * D,
    ln2: N * D,
    st2: 2 * N,
    hpre: 4 * N * D,
    hact: 4 * N * D,
    out: N * D,
  };
  const activations: Record<string, number> = { x0: N * D };
  // Every block keeps its output (the next unit's input); its insides are kept per block, or (recompute)
  // exist once, for the block being computed.
  for (let b = 0; b < L; b++) for (const [k, n] of Object.entries(block)) if (k === 'out' || !recompute) activations[`b${b}.${k}`] = n;
  if (recompute) for (const [k, n] of Object.entries(block)) if (k !== 'out') activations[`r.${k}`] = n;
  Object.assign(activations, { lnf: N * D, stf: 2 * N, logits: N * V });
  const largest = Math.max(...spec.layers.map((g) => g.size));
  const hd = D / H;
  const head = { hq: T * hd, hk: T * hd, hv: T * hd, hy: T * hd, hdy: T * hd, hdq: T * hd, hdk: T * hd, hdv: T * hd, hdP: T * T };
  const scratch = { p: largest, g: largest, d: N * D, dx: N * D, d3: 3 * N * D, d4: 4 * N * D, dl: N * V, zero: Math.max(V, T), ...head };
  return { activations, scratch };
}

/**
 * The GPT's passes on a kernel arena. Every product runs in the MLP's WebAssembly SIMD kernels
 * (tensor/wasm/matmul.wat), forward and backward: the Linear layers (q/k/v, the attention's output
 * projection, the MLP's two layers, the head) and the attention's per-head q·kᵀ and P·v. Softmax,
 * LayerNorm, GELU and the residuals run in JavaScript on views of the same memory.
 */
export class Gpt extends ArenaModel {
  private rows = 0;
  private tokens = new Int32Array(0);
  private v: Record<string, Float32Array> = {};
  /** Bytes the forward pass keeps for the backward pass (the activations), as laid out. */
  activationBytes = 0;

  /** `recompute`: activation checkpointing per block (keep each block's output; recompute its insides in
   *  the backward pass, one block at a time). */
  readonly recompute: boolean;

  constructor(
    readonly spec: GptSpec,
    opts: { threads?: number; threadScript?: URL; recompute?: boolean } = {},
  ) {
    super(opts);
    this.recompute = opts.recompute ?? false;
  }

  protected get groups(): readonly GptGroup[] {
    return this.spec.layers;
  }

  /** A batch of `rows` sequences of T token ids (row-major). */
  start(tokens: ArrayLike<number>, rows: number): void {
    const { seq: T, vocab: V } = this.spec.shape;
    if (tokens.length !== rows * T) throw new RangeError(`gpt: ${tokens.length} tokens, expected ${rows} sequences of ${T}`);
    if (rows !== this.rows) {
      const { activations, scratch } = regions(this.spec, rows, this.recompute);
      this.arena.layout({ ...activations, ...scratch });
      // Views, valid until the next layout (the arena's memory may grow then).
      this.v = Object.fromEntries(Object.keys({ ...activations, ...scratch }).map((name) => [name, this.arena.f32(name)]));
      for (const [name, n] of Object.entries({ ...activations, ...scratch })) this.v[name] = this.v[name].subarray(0, n);
      const floats = (r: Record<string, number>) => Object.values(r).reduce((t, n) => t + n, 0);
      this.activationBytes = 4 * floats(activations);
      this.rows = rows;
      this.tokens = new Int32Array(rows * T);
    }
    const tok = this.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (!(Number.isInteger(t) && t >= 0 && t < V)) throw new RangeError(`gpt: token ${t} at ${i} is not in 0..${V - 1}`);
      tok[i] = t;
    }
  }

  /** Unit `u`'s forward pass with its parameters (fp32, or bf16 bits widened on the way in). */
  forward(u: number, params: Elems): void {
    const g = this.group(u, params);
    this.arena.load('p', params.subarray(0, g.size));
    if (g.kind === 'embeddings') this.embeddingsForward();
    else if (g.kind === 'block') this.blockForward(g);
    else this.headForward(g);
  }

  /** Mean cross-entropy over every token; its gradient times `gradScale` starts the backward pass. */
  loss(targets: Int32Array, gradScale = 1): number {
    const N = this.rows * this.spec.shape.seq;
    const dl = this.v.dl;
    const loss = crossEntropy(this.v.logits, targets, N, this.spec.shape.vocab, dl);
    if (gradScale !== 1) for (let i = 0; i < dl.length; i++) dl[i] *= gradScale;
    return loss;
  }

  /** Unit `u`'s backward pass: its parameter gradient into `grad` (its size); the input gradient moves on. */
  backward(u: number, params: Elems, grad: Float32Array): void {
    const g = this.group(u, params);
    if (g.kind === 'embeddings') {
      grad.fill(0, 0, g.size);
      return this.embeddingsBackward(grad);
    }
    this.arena.load('p', params.subarray(0, g.size));
    this.v.g.fill(0, 0, g.size);
    if (g.kind === 'head') this.headBackward(g);
    else this.blockBackward(g);
    grad.set(this.v.g.subarray(0, g.size));
  }

  /** The logits of the last forward pass (N×V). */
  logits(): Float32Array {
    return this.v.logits;
  }

  private group(u: number, params: Elems): GptGroup {
    const g = this.spec.layers[u];
    if (!g) throw new RangeError(`gpt: unit ${u} does not exist`);
    if (params.length < g.size) throw new RangeError(`gpt: unit ${u} needs ${g.size} parameters, got ${params.length}`);
    return g;
  }

  /** Where each of the unit's tensors starts inside the unit (in elements), by short name. */
  private offsets(g: GptGroup): Record<string, number> {
    return Object.fromEntries(g.tensors.map((t) => [t.name.replace(/^h\.\d+\./, ''), t.offset - g.offset]));
  }

  /** A tensor of the loaded parameters ('p') or of the gradient ('g') as a view. */
  private view(region: 'p' | 'g', g: GptGroup, name: string): Float32Array {
    const t = g.tensors.find((x) => x.name.replace(/^h\.\d+\./, '') === name)!;
    const at = t.offset - g.offset;
    return this.v[region].subarray(at, at + t.shape.reduce((a, b) => a * b, 1));
  }

  /** The region of block b's activation `name`. */
  private actName(b: number, name: BlockName): string {
    return name === 'out' || !this.recompute ? `b${b}.${name}` : `r.${name}`;
  }

  private act(b: number, name: BlockName): Float32Array {
    return this.v[this.actName(b, name)];
  }

  private input(block: number): Float32Array {
    return block === 0 ? this.v.x0 : this.act(block - 1, 'out');
  }

  /** out = x·Wᵀ + b in the SIMD kernels; W and b at element offsets of the loaded unit (b null: none). */
  private linear(x: string, w: number, b: number | null, out: string, rows: number, inputs: number, outputs: number): void {
    const a = this.arena;
    const p = a.at('p');
    a.linearForward(a.at(x), p + 4 * w, b === null ? a.at('zero') : p + 4 * b, a.at(out), rows, inputs, outputs);
  }

  /** The backward of linear(): dW (and db) into the unit's gradient, dX = dY·W into `dx`. */
  private linearBack(x: string, dy: string, w: number, b: number | null, dx: string, rows: number, inputs: number, outputs: number): void {
    const a = this.arena;
    const g = a.at('g');
    a.matmulTN(a.at(dy), a.at(x), g + 4 * w, outputs, inputs, rows);
    if (b !== null) a.k.colsum(a.at(dy), g + 4 * b, rows, outputs);
    a.matmulNN(a.at(dy), a.at('p') + 4 * w, a.at(dx), rows, inputs, outputs);
  }

  private embeddingsForward(): void {
    const { dim: D, seq: T, vocab: V } = this.spec.shape;
    const p = this.v.p;
    const x0 = this.v.x0;
    const tok = this.tokens;
    for (let n = 0; n < tok.length; n++) {
      const to = tok[n] * D;
      const po = V * D + (n % T) * D;
      for (let i = 0; i < D; i++) x0[n * D + i] = p[to + i] + p[po + i];
    }
  }

  private embeddingsBackward(grad: Float32Array): void {
    const { dim: D, seq: T, vocab: V } = this.spec.shape;
    const d = this.v.d; // the gradient w.r.t. the embeddings' output, left there by block 0
    const tok = this.tokens;
    for (let n = 0; n < tok.length; n++) {
      const to = tok[n] * D;
      const po = V * D + (n % T) * D;
      for (let i = 0; i < D; i++) {
        grad[to + i] += d[n * D + i];
        grad[po + i] += d[n * D + i];
      }
    }
  }

  private blockForward(g: GptGroup): void {
    const { dim: D, seq: T } = this.spec.shape;
    const N = this.rows * T;
    const b = g.block;
    const o = this.offsets(g);
    const w = (name: string) => this.view('p', g, name);
    const at = (name: BlockName) => this.actName(b, name);
    const x = this.input(b);
    const a = (name: BlockName) => this.act(b, name);
    layerNorm(x, w('ln_1.weight'), w('ln_1.bias'), N, D, a('ln1'), a('st1'));
    this.linear(at('ln1'), o['attn.qkv.weight'], o['attn.qkv.bias'], at('qkv'), N, D, 3 * D);
    this.attention(b);
    this.linear(at('y'), o['attn.proj.weight'], o['attn.proj.bias'], at('xmid'), N, D, D);
    const xmid = a('xmid');
    for (let i = 0; i < N * D; i++) xmid[i] += x[i];
    layerNorm(xmid, w('ln_2.weight'), w('ln_2.bias'), N, D, a('ln2'), a('st2'));
    this.linear(at('ln2'), o['mlp.fc.weight'], o['mlp.fc.bias'], at('hpre'), N, D, 4 * D);
    gelu(a('hpre'), a('hact'));
    this.linear(at('hact'), o['mlp.proj.weight'], o['mlp.proj.bias'], at('out'), N, 4 * D, D);
    const out = a('out');
    for (let i = 0; i < N * D; i++) out[i] += xmid[i];
  }

  /** Backward through a block: region d holds the gradient w.r.t. its output on entry, w.r.t. its input
   *  on exit. */
  private blockBackward(g: GptGroup): void {
    if (this.recompute) this.blockForward(g); // the insides again, from the kept input and the loaded parameters
    const { dim: D, seq: T } = this.spec.shape;
    const N = this.rows * T;
    const b = g.block;
    const o = this.offsets(g);
    const w = (name: string) => this.view('p', g, name);
    const dw = (name: string) => this.view('g', g, name);
    const at = (name: BlockName) => this.actName(b, name);
    const a = (name: BlockName) => this.act(b, name);
    const { d, dx, d4 } = this.v;
    // MLP half: out = xmid + proj(gelu(fc(ln2(xmid)))). d is dOut; the residual passes it on to xmid.
    this.linearBack(at('hact'), 'd', o['mlp.proj.weight'], o['mlp.proj.bias'], 'd4', N, 4 * D, D);
    geluBackward(a('hpre'), d4);
    this.linearBack(at('ln2'), 'd4', o['mlp.fc.weight'], o['mlp.fc.bias'], 'dx', N, D, 4 * D);
    layerNormBackward(a('xmid'), w('ln_2.weight'), a('st2'), dx, N, D, dw('ln_2.weight'), dw('ln_2.bias'), d); // d = dxmid
    // Attention half: xmid = x + proj(attn(qkv(ln1(x)))).
    this.linearBack(at('y'), 'd', o['attn.proj.weight'], o['attn.proj.bias'], 'dx', N, D, D);
    this.attentionBackward(b);
    this.linearBack(at('ln1'), 'd3', o['attn.qkv.weight'], o['attn.qkv.bias'], 'dx', N, D, 3 * D);
    // The k bias adds q·b to a whole row of scores, which softmax ignores: its gradient is exactly zero,
    // and what the sum above leaves there is rounding noise (~1e-10), which Adam (dividing by sqrt(v) + eps)
    // would turn into steps of up to lr. It is set to the zero it is.
    dw('attn.qkv.bias').fill(0, D, 2 * D);
    layerNormBackward(this.input(b), w('ln_1.weight'), a('st1'), dx, N, D, dw('ln_1.weight'), dw('ln_1.bias'), d); // d = dx
  }

  /** Copy head h of sequence s out of the rows of `src` (row stride `stride`, column `col`) into `dst`
   *  (T×hd, contiguous, as the kernels want it), or back when `back`. */
  private headSlice(src: Float32Array, stride: number, col: number, dst: Float32Array, s: number, back = false): void {
    const { seq: T, dim: D, heads: H } = this.spec.shape;
    const hd = D / H;
    for (let t = 0; t < T; t++) {
      const at = (s * T + t) * stride + col;
      if (back) for (let j = 0; j < hd; j++) src[at + j] = dst[t * hd + j];
      else for (let j = 0; j < hd; j++) dst[t * hd + j] = src[at + j];
    }
  }

  /** Causal multi-head attention of block b: per sequence and head, S = q·kᵀ and y = P·v in the SIMD
   *  kernels, P = softmax(S / sqrt(hd)) over u <= t in JavaScript. P is kept for the backward pass. */
  private attention(b: number): void {
    const { seq: T, dim: D, heads: H } = this.spec.shape;
    const hd = D / H;
    const scale = 1 / Math.sqrt(hd);
    const ar = this.arena;
    const qkv = this.act(b, 'qkv');
    const y = this.act(b, 'y');
    const Pall = this.act(b, 'P');
    const { hq, hk, hv, hy } = this.v;
    for (let s = 0; s < this.rows; s++)
      for (let h = 0; h < H; h++) {
        const base = (s * H + h) * T * T;
        this.headSlice(qkv, 3 * D, h * hd, hq, s);
        this.headSlice(qkv, 3 * D, D + h * hd, hk, s);
        this.headSlice(qkv, 3 * D, 2 * D + h * hd, hv, s);
        const Pptr = ar.at(this.actName(b, 'P')) + 4 * base;
        ar.linearForward(ar.at('hq'), ar.at('hk'), ar.at('zero'), Pptr, T, hd, T); // S = q·kᵀ
        for (let t = 0; t < T; t++) {
          const row = base + t * T;
          let max = -Infinity;
          for (let u = 0; u <= t; u++) max = Math.max(max, Pall[row + u] * scale);
          let sum = 0;
          for (let u = 0; u <= t; u++) sum += Pall[row + u] = Math.exp(Pall[row + u] * scale - max);
          for (let u = 0; u <= t; u++) Pall[row + u] /= sum;
          for (let u = t + 1; u < T; u++) Pall[row + u] = 0;
        }
        ar.matmulNN(Pptr, ar.at('hv'), ar.at('hy'), T, hd, T); // y = P·v
        this.headSlice(y, D, h * hd, hy, s, true);
      }
  }

  /** The backward of attention(): region dx holds the gradient w.r.t. y; d3 gets it w.r.t. q, k, v. */
  private attentionBackward(b: number): void {
    const { seq: T, dim: D, heads: H } = this.spec.shape;
    const hd = D / H;
    const scale = 1 / Math.sqrt(hd);
    const ar = this.arena;
    const qkv = this.act(b, 'qkv');
    const Pall = this.act(b, 'P');
    const { dx: dy, d3: dqkv, hq, hk, hv, hdy, hdq, hdk, hdv, hdP } = this.v;
    const at = (name: string) => ar.at(name);
    for (let s = 0; s < this.rows; s++)
      for (let h = 0; h < H; h++) {
        const base = (s * H + h) * T * T;
        const Pptr = ar.at(this.actName(b, 'P')) + 4 * base;
        this.headSlice(qkv, 3 * D, h * hd, hq, s);
        this.headSlice(qkv, 3 * D, D + h * hd, hk, s);
        this.headSlice(qkv, 3 * D, 2 * D + h * hd, hv, s);
        this.headSlice(dy, D, h * hd, hdy, s);
        ar.linearForward(at('hdy'), at('hv'), at('zero'), at('hdP'), T, hd, T); // dP = dy·vᵀ
        ar.matmulTN(Pptr, at('hdy'), at('hdv'), T, hd, T); // dv = Pᵀ·dy
        for (let t = 0; t < T; t++) {
          const row = base + t * T;
          let dot = 0;
          for (let u = 0; u <= t; u++) dot += Pall[row + u] * hdP[t * T + u];
          for (let u = 0; u <= t; u++) hdP[t * T + u] = Pall[row + u] * (hdP[t * T + u] - dot) * scale; // dS
          for (let u = t + 1; u < T; u++) hdP[t * T + u] = 0;
        }
        ar.matmulNN(at('hdP'), at('hk'), at('hdq'), T, hd, T); // dq = dS·k
        ar.matmulTN(at('hdP'), at('hq'), at('hdk'), T, hd, T); // dk = dSᵀ·q
        this.headSlice(dqkv, 3 * D, h * hd, hdq, s, true);
        this.headSlice(dqkv, 3 * D, D + h * hd, hdk, s, true);
        this.headSlice(dqkv, 3 * D, 2 * D + h * hd, hdv, s, true);
      }
  }

  private headForward(g: GptGroup): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    const o = this.offsets(g);
    layerNorm(this.input(L), this.view('p', g, 'ln_f.weight'), this.view('p', g, 'ln_f.bias'), N, D, this.v.lnf, this.v.stf);
    this.linear('lnf', o['head.weight'], null, 'logits', N, D, V);
  }

  private headBackward(g: GptGroup): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    const o = this.offsets(g);
    this.linearBack('lnf', 'dl', o['head.weight'], null, 'dx', N, D, V);
    this.v.d.fill(0);
    layerNormBackward(
      this.input(L),
      this.view('p', g, 'ln_f.weight'),
      this.v.stf,
      this.v.dx,
      N,
      D,
      this.view('g', g, 'ln_f.weight'),
      this.view('g', g, 'ln_f.bias'),
      this.v.d,
    );
  }
}

/** The GPT on the calling thread, behind the interface the schemes drive. */
export class GptCompute implements Compute {
  readonly model: Gpt;
  readonly otherThreadBytes = 0;

  /** `threads`: how many threads compute the products (--threads); `recompute`: see Gpt. */
  constructor(spec: GptSpec, threads = 1, recompute = false) {
    this.model = new Gpt(spec, { threads, recompute });
  }

  async start(x: Float32Array, rows: number): Promise<void> {
    await this.model.ready();
    this.model.start(x, rows);
  }

  async forward(layer: number, params: Elems): Promise<void> {
    this.model.forward(layer, params);
  }

  async loss(labels: Int32Array, gradScale: number): Promise<number> {
    return this.model.loss(labels, gradScale);
  }

  get arenaBytes(): number {
    return this.model.arena.bytes;
  }

  get activationBytes(): number {
    return this.model.activationBytes;
  }

  async backward(layer: number, params: Elems, grad: Float32Array): Promise<void> {
    this.model.backward(layer, params, grad);
  }

  async close(): Promise<void> {
    await this.model.close();
  }
}
