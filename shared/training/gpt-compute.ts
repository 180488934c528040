// The GPT's forward and backward passes, one unit at a time (embeddings, a block, ln_f + head), so a
// scheme can hand over each unit's parameters just in time, as for the MLP. What the forward pass keeps
// for the backward pass is allocated as named activations per batch shape and counted (activationBytes);
// gradient scratch is counted apart. The products are plain JavaScript loops (ops.ts), not the MLP's SIMD
// kernels: at the sizes this runs here the attention and LayerNorm loops cost as much as the products.
import { toF32 } from '../tensor/convert.js';
import type { Elems } from '../tensor/dtype.js';
import type { Compute } from './compute.js';
import type { GptGroup, GptSpec } from './gpt.js';
import { crossEntropy, gelu, geluBackward, linearBackward, linearForward } from './ops.js';

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

export class Gpt {
  private rows = 0;
  private tokens = new Int32Array(0);
  private x0 = new Float32Array(0);
  private blocks: BlockActs[] = [];
  private head = { ln: new Float32Array(0), st: new Float32Array(0), logits: new Float32Array(0) };
  private scratch = {
    p: new Float32Array(0),
    d: new Float32Array(0),
    dx: new Float32Array(0),
    d3: new Float32Array(0),
    d4: new Float32Array(0),
    dl: new Float32Array(0),
  };
  /** Bytes the forward pass keeps for the backward pass (the activations), and gradient scratch. */
  activationBytes = 0;
  scratchBytes = 0;

  constructor(readonly spec: GptSpec) {}

  /** A batch of `rows` sequences of T token ids (row-major). */
  start(tokens: ArrayLike<number>, rows: number): void {
    const { dim: D, heads: H, seq: T, vocab: V, layers: L } = this.spec.shape;
    if (tokens.length !== rows * T) throw new RangeError(`gpt: ${tokens.length} tokens, expected ${rows} sequences of ${T}`);
    if (rows !== this.rows) {
      const N = rows * T;
      const f = (n: number) => new Float32Array(n);
      this.x0 = f(N * D);
      this.blocks = Array.from({ length: L }, () => ({
        ln1: f(N * D),
        st1: f(2 * N),
        qkv: f(3 * N * D),
        P: f(rows * H * T * T),
        y: f(N * D),
        xmid: f(N * D),
        ln2: f(N * D),
        st2: f(2 * N),
        hpre: f(4 * N * D),
        hact: f(4 * N * D),
        out: f(N * D),
      }));
      this.head = { ln: f(N * D), st: f(2 * N), logits: f(N * V) };
      const largest = Math.max(...this.spec.layers.map((g) => g.size));
      this.scratch = { p: f(largest), d: f(N * D), dx: f(N * D), d3: f(3 * N * D), d4: f(4 * N * D), dl: f(N * V) };
      const bytes = (xs: Float32Array[]) => xs.reduce((t, a) => t + a.byteLength, 0);
      this.activationBytes = bytes([this.x0, ...this.blocks.flatMap((b) => Object.values(b)), this.head.ln, this.head.st, this.head.logits]);
      this.scratchBytes = bytes(Object.values(this.scratch)) + 4 * N;
      this.rows = rows;
      this.tokens = new Int32Array(N);
    }
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (!(Number.isInteger(t) && t >= 0 && t < V)) throw new RangeError(`gpt: token ${t} at ${i} is not in 0..${V - 1}`);
      this.tokens[i] = t;
    }
  }

  /** Unit `u`'s forward pass with its parameters (fp32, or bf16 bits widened here). */
  forward(u: number, params: Elems): void {
    const g = this.group(u, params);
    const p = this.widen(params, g.size);
    if (g.kind === 'embeddings') this.embeddingsForward(p);
    else if (g.kind === 'block') this.blockForward(g.block, p);
    else this.headForward(p);
  }

  /** Mean cross-entropy over every token; its gradient times `gradScale` starts the backward pass. */
  loss(targets: Int32Array, gradScale = 1): number {
    const N = this.rows * this.spec.shape.seq;
    const dl = this.scratch.dl;
    const loss = crossEntropy(this.head.logits, targets, N, this.spec.shape.vocab, dl);
    if (gradScale !== 1) for (let i = 0; i < dl.length; i++) dl[i] *= gradScale;
    return loss;
  }

  /** Unit `u`'s backward pass: its parameter gradient into `grad` (its size); the input gradient moves on. */
  backward(u: number, params: Elems, grad: Float32Array): void {
    const g = this.group(u, params);
    const p = this.widen(params, g.size);
    grad.fill(0, 0, g.size);
    if (g.kind === 'head') this.headBackward(p, grad);
    else if (g.kind === 'block') this.blockBackward(g.block, p, grad);
    else this.embeddingsBackward(grad);
  }

  /** The whole model at once, as one process training alone does: the loss, and every parameter's
   *  gradient in `grad` (laid out like `theta`). */
  lossAndGradient(theta: Float32Array, tokens: ArrayLike<number>, rows: number, targets: Int32Array, grad: Float32Array): number {
    const of = (a: Float32Array, g: GptGroup) => a.subarray(g.offset, g.offset + g.size);
    this.start(tokens, rows);
    for (const g of this.spec.layers) this.forward(g.index, of(theta, g));
    const loss = this.loss(targets);
    for (const g of [...this.spec.layers].reverse()) this.backward(g.index, of(theta, g), of(grad, g));
    return loss;
  }

  /** The logits of the last forward pass (N×V). */
  logits(): Float32Array {
    return this.head.logits;
  }

  private group(u: number, params: Elems): GptGroup {
    const g = this.spec.layers[u];
    if (!g) throw new RangeError(`gpt: unit ${u} does not exist`);
    if (params.length < g.size) throw new RangeError(`gpt: unit ${u} needs ${g.size} parameters, got ${params.length}`);
    return g;
  }

  private widen(params: Elems, n: number): Float32Array {
    if (params instanceof Float32Array) return params.subarray(0, n);
    return toF32(params.subarray(0, n), this.scratch.p.subarray(0, n));
  }

  /** The unit's tensors as views of its parameters (or of its gradient), by short name. */
  private views(g: GptGroup, a: Float32Array): Record<string, Float32Array> {
    const out: Record<string, Float32Array> = {};
    for (const t of g.tensors) {
      const n = t.shape.reduce((x, y) => x * y, 1);
      out[t.name.replace(/^h\.\d+\./, '')] = a.subarray(t.offset - g.offset, t.offset - g.offset + n);
    }
    return out;
  }

  private input(block: number): Float32Array {
    return block === 0 ? this.x0 : this.blocks[block - 1].out;
  }

  private embeddingsForward(p: Float32Array): void {
    const { dim: D, seq: T, vocab: V } = this.spec.shape;
    const tok = p.subarray(0, V * D);
    const pos = p.subarray(V * D, V * D + T * D);
    for (let n = 0; n < this.tokens.length; n++) {
      const t = n % T;
      const to = this.tokens[n] * D;
      for (let i = 0; i < D; i++) this.x0[n * D + i] = tok[to + i] + pos[t * D + i];
    }
  }

  private embeddingsBackward(grad: Float32Array): void {
    const { dim: D, seq: T, vocab: V } = this.spec.shape;
    const d = this.scratch.d; // the gradient w.r.t. the embeddings' output, left there by block 0
    for (let n = 0; n < this.tokens.length; n++) {
      const to = this.tokens[n] * D;
      const po = V * D + (n % T) * D;
      for (let i = 0; i < D; i++) {
        grad[to + i] += d[n * D + i];
        grad[po + i] += d[n * D + i];
      }
    }
  }

  private blockForward(b: number, p: Float32Array): void {
    const { dim: D, heads: H, seq: T } = this.spec.shape;
    const N = this.rows * T;
    const w = this.views(this.spec.layers[b + 1], p);
    const a = this.blocks[b];
    const x = this.input(b);
    layerNorm(x, w['ln_1.weight'], w['ln_1.bias'], N, D, a.ln1, a.st1);
    linearForward(a.ln1, w['attn.qkv.weight'], w['attn.qkv.bias'], N, D, 3 * D, a.qkv);
    // Causal attention per sequence and head: P = softmax(q·kᵀ / sqrt(hd)) over u <= t, y = P·v.
    const hd = D / H;
    const scale = 1 / Math.sqrt(hd);
    a.y.fill(0);
    for (let s = 0; s < this.rows; s++)
      for (let h = 0; h < H; h++) {
        const P = a.P.subarray((s * H + h) * T * T, (s * H + h + 1) * T * T);
        for (let t = 0; t < T; t++) {
          const q = (s * T + t) * 3 * D + h * hd;
          let max = -Infinity;
          for (let u = 0; u <= t; u++) {
            const k = (s * T + u) * 3 * D + D + h * hd;
            let dot = 0;
            for (let j = 0; j < hd; j++) dot += a.qkv[q + j] * a.qkv[k + j];
            P[t * T + u] = dot * scale;
            if (P[t * T + u] > max) max = P[t * T + u];
          }
          let sum = 0;
          for (let u = 0; u <= t; u++) sum += P[t * T + u] = Math.exp(P[t * T + u] - max);
          for (let u = 0; u <= t; u++) P[t * T + u] /= sum;
          for (let u = t + 1; u < T; u++) P[t * T + u] = 0;
          const yo = (s * T + t) * D + h * hd;
          for (let u = 0; u <= t; u++) {
            const pv = P[t * T + u];
            const v = (s * T + u) * 3 * D + 2 * D + h * hd;
            for (let j = 0; j < hd; j++) a.y[yo + j] += pv * a.qkv[v + j];
          }
        }
      }
    linearForward(a.y, w['attn.proj.weight'], w['attn.proj.bias'], N, D, D, a.xmid);
    for (let i = 0; i < N * D; i++) a.xmid[i] += x[i];
    layerNorm(a.xmid, w['ln_2.weight'], w['ln_2.bias'], N, D, a.ln2, a.st2);
    linearForward(a.ln2, w['mlp.fc.weight'], w['mlp.fc.bias'], N, D, 4 * D, a.hpre);
    gelu(a.hpre, a.hact);
    linearForward(a.hact, w['mlp.proj.weight'], w['mlp.proj.bias'], N, 4 * D, D, a.out);
    for (let i = 0; i < N * D; i++) a.out[i] += a.xmid[i];
  }

  /** Backward through block b: scratch.d holds the gradient w.r.t. its output on entry, w.r.t. its input
   *  on exit. */
  private blockBackward(b: number, p: Float32Array, grad: Float32Array): void {
    const { dim: D, heads: H, seq: T } = this.spec.shape;
    const N = this.rows * T;
    const g = this.spec.layers[b + 1];
    const w = this.views(g, p);
    const dw = this.views(g, grad);
    const a = this.blocks[b];
    const x = this.input(b);
    const { d, dx, d3, d4 } = this.scratch;
    // MLP half: out = xmid + proj(gelu(fc(ln2(xmid)))). d is dOut, and the residual passes it to xmid.
    linearBackward(a.hact, w['mlp.proj.weight'], d, N, 4 * D, D, dw['mlp.proj.weight'], dw['mlp.proj.bias'], d4);
    geluBackward(a.hpre, d4);
    linearBackward(a.ln2, w['mlp.fc.weight'], d4, N, D, 4 * D, dw['mlp.fc.weight'], dw['mlp.fc.bias'], dx);
    const dxmid = d; // dOut + LN2's input gradient, in place
    layerNormBackward(a.xmid, w['ln_2.weight'], a.st2, dx, N, D, dw['ln_2.weight'], dw['ln_2.bias'], dxmid);
    // Attention half: xmid = x + proj(attn(qkv(ln1(x)))).
    linearBackward(a.y, w['attn.proj.weight'], dxmid, N, D, D, dw['attn.proj.weight'], dw['attn.proj.bias'], dx);
    const hd = D / H;
    const scale = 1 / Math.sqrt(hd);
    d3.fill(0);
    const dP = new Float64Array(T);
    for (let s = 0; s < this.rows; s++)
      for (let h = 0; h < H; h++) {
        const P = a.P.subarray((s * H + h) * T * T, (s * H + h + 1) * T * T);
        for (let t = 0; t < T; t++) {
          const yo = (s * T + t) * D + h * hd;
          let dot = 0;
          for (let u = 0; u <= t; u++) {
            const v = (s * T + u) * 3 * D + 2 * D + h * hd;
            let g1 = 0;
            for (let j = 0; j < hd; j++) {
              g1 += dx[yo + j] * a.qkv[v + j];
              d3[v + j] += P[t * T + u] * dx[yo + j]; // dv
            }
            dP[u] = g1;
            dot += P[t * T + u] * g1;
          }
          const q = (s * T + t) * 3 * D + h * hd;
          for (let u = 0; u <= t; u++) {
            const dS = P[t * T + u] * (dP[u] - dot) * scale;
            const k = (s * T + u) * 3 * D + D + h * hd;
            for (let j = 0; j < hd; j++) {
              d3[q + j] += dS * a.qkv[k + j]; // dq
              d3[k + j] += dS * a.qkv[q + j]; // dk
            }
          }
        }
      }
    linearBackward(a.ln1, w['attn.qkv.weight'], d3, N, D, 3 * D, dw['attn.qkv.weight'], dw['attn.qkv.bias'], dx);
    // The k bias adds q·b to a whole row of scores, which softmax ignores: its gradient is exactly zero,
    // and what the sum above leaves there is rounding noise (~1e-10), which Adam (dividing by sqrt(v) + eps)
    // would turn into steps of up to lr. It is set to the zero it is.
    dw['attn.qkv.bias'].fill(0, D, 2 * D);
    layerNormBackward(x, w['ln_1.weight'], a.st1, dx, N, D, dw['ln_1.weight'], dw['ln_1.bias'], d); // d = dxmid + LN1's
  }

  private headForward(p: Float32Array): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    const w = this.views(this.spec.layers[L + 1], p);
    layerNorm(this.input(L), w['ln_f.weight'], w['ln_f.bias'], N, D, this.head.ln, this.head.st);
    linearForward(this.head.ln, w['head.weight'], NO_BIAS(V), N, D, V, this.head.logits);
  }

  private headBackward(p: Float32Array, grad: Float32Array): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    const g = this.spec.layers[L + 1];
    const w = this.views(g, p);
    const dw = this.views(g, grad);
    const { d, dx, dl } = this.scratch;
    linearBackward(this.head.ln, w['head.weight'], dl, N, D, V, dw['head.weight'], new Float32Array(V), dx);
    d.fill(0);
    layerNormBackward(this.input(L), w['ln_f.weight'], this.head.st, dx, N, D, dw['ln_f.weight'], dw['ln_f.bias'], d);
  }
}

const zeros = new Map<number, Float32Array>();
/** A zero bias of n (the head has none). */
function NO_BIAS(n: number): Float32Array {
  let z = zeros.get(n);
  if (!z) zeros.set(n, (z = new Float32Array(n)));
  return z;
}

/** The GPT on the calling thread, behind the interface the schemes drive. */
export class GptCompute implements Compute {
  readonly model: Gpt;
  readonly otherThreadBytes = 0;

  constructor(spec: GptSpec) {
    this.model = new Gpt(spec);
  }

  async start(x: Float32Array, rows: number): Promise<void> {
    this.model.start(x, rows);
  }

  async forward(layer: number, params: Elems): Promise<void> {
    this.model.forward(layer, params);
  }

  async loss(labels: Int32Array, gradScale: number): Promise<number> {
    return this.model.loss(labels, gradScale);
  }

  get arenaBytes(): number {
    return this.model.activationBytes + this.model.scratchBytes;
  }

  get activationBytes(): number {
    return this.model.activationBytes;
  }

  async backward(layer: number, params: Elems, grad: Float32Array): Promise<void> {
    this.model.backward(layer, params, grad);
  }

  async close(): Promise<void> {}
}
