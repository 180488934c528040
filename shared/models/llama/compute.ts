// The Llama decoder's forward and backward passes, one unit at a time (embeddings, a block, norm + head), on
// a kernel arena as the GPT's: every product (the seven projections, the head, the attention's per-head
// q·kᵀ and P·v) in the BLAS or the WebAssembly SIMD kernels; RMSNorm, rotary, SwiGLU and the residuals in
// JavaScript on views of the same memory (llama-ops.ts).
import { Decoder, type DecoderRegions } from '../../training/decoder.js';
import { attentionBackward, attentionForward, type AttentionHost } from './attention.js';
import { LLAMA_BLOCK as BLOCK, type LlamaBlockName as BlockName, type LlamaGroup, type LlamaSpec } from './spec.js';
import { rmsNorm, rmsNormBackward, rope, ropeTables, swiglu, swigluBackward } from './ops.js';
import { linearBackward, linearForward } from '../../training/lora-ops.js';
import { loadedSize } from '../../training/param-group.js';

/** Every region's view by name (llama regions are named by strings: `b3.q`, `r.gate`, `dx`, ...). */
type LlamaViews = Record<'p' | 'g' | 'd' | 'dl' | 'logits', Float32Array> & Record<string, Float32Array>;

export class Llama extends Decoder<LlamaGroup, LlamaViews> {
  declare readonly spec: LlamaSpec;
  private readonly tables: { cos: Float32Array; sin: Float32Array };

  constructor(spec: LlamaSpec, opts: { threads?: number; threadScript?: URL; recompute?: boolean } = {}) {
    super(spec, opts);
    this.tables = ropeTables(spec.shape.seq, spec.headDim, spec.ropeTheta);
  }

  /** The regions of a batch of `rows` sequences, in elements: activations first, then scratch. */
  protected regions(rows: number): DecoderRegions {
    const { layers: L, dim: D, heads: H, kvHeads: KV, ff: FF, seq: T, vocab: V } = this.spec.shape;
    const { hd, Q, K } = this.spec.widths;
    const N = rows * T;
    const qk = this.spec.qkNorm ? 1 : 0; // q and k before their per-head norms, and each head's 1/rms
    const size: Record<BlockName, number> = {
      ...{ n1: N * D, r1: N, q0: qk * N * Q, rq: qk * N * H, k0: qk * N * K, rk: qk * N * KV },
      ...{ q: N * Q, k: N * K, v: N * K, P: rows * H * T * T, y: N * Q, xmid: N * D },
      ...{ n2: N * D, r2: N, gate: N * FF, up: N * FF, h: N * FF, out: N * D },
    };
    const activations: Record<string, number> = { x0: N * D };
    for (let b = 0; b < L; b++) for (const k of BLOCK) if (k === 'out' || !this.recompute) activations[`b${b}.${k}`] = size[k];
    if (this.recompute) for (const k of BLOCK) if (k !== 'out') activations[`r.${k}`] = size[k];
    Object.assign(activations, { nf: N * D, rf: N, logits: N * V });
    const largest = Math.max(...this.spec.layers.map(loadedSize));
    const head = { hq: T * hd, hk: T * hd, hv: T * hd, hy: T * hd, hdy: T * hd, hdq: T * hd, hdk: T * hd, hdv: T * hd, hdP: T * T };
    const scratch = {
      p: largest,
      g: largest,
      d: N * D,
      dx: N * Math.max(D, Q),
      dx2: N * D,
      dq: N * Q,
      dk: N * K,
      dv: N * K,
      dqn: qk * N * Math.max(Q, K), // the gradient through a per-head norm, to its projection
      df: N * FF,
      df2: N * FF,
      dl: N * V,
      zero: Math.max(V, T, FF, D, Q),
      ...head,
    };
    return { activations, scratch };
  }

  private name(b: number, k: BlockName): string {
    return k === 'out' || !this.recompute ? `b${b}.${k}` : `r.${k}`;
  }

  private input(block: number): string {
    return block === 0 ? 'x0' : this.name(block - 1, 'out');
  }

  /** out = x·Wᵀ (+ b where the projection has a bias: Qwen2's q, k and v; plus its adapter's, if it has one),
   *  `proj` a tensor name of the loaded unit without `.weight`. */
  private linear(g: LlamaGroup, x: string, proj: string, out: string, rows: number, inputs: number, outputs: number): void {
    linearForward(this.arena, this.linearCall(g, x, this.offset(g, `${proj}.weight`), this.bias(g, proj), rows, inputs, outputs), out);
  }

  /** The backward of linear(): dW (and db) into the unit's gradient unless frozen, dX = dY·W into `dx`. */
  private linearBack(g: LlamaGroup, x: string, dy: string, proj: string, dx: string, rows: number, inputs: number, outputs: number): void {
    linearBackward(this.arena, this.linearCall(g, x, this.offset(g, `${proj}.weight`), this.bias(g, proj), rows, inputs, outputs), dy, dx);
  }

  /** The bias of a q, k or v projection where the model has them, as an offset in the unit; else null. */
  private bias(g: LlamaGroup, proj: string): number | null {
    return this.spec.qkvBias && /(q|k|v)_proj$/.test(proj) ? this.offset(g, `${proj}.bias`) : null;
  }

  protected embeddingsForward(): void {
    const D = this.spec.shape.dim;
    const [p, x0] = [this.v.p, this.v.x0];
    this.tokens.forEach((t, n) => x0.set(p.subarray(t * D, t * D + D), n * D));
  }

  protected embeddingsBackward(grad: Float32Array): void {
    const D = this.spec.shape.dim;
    const d = this.v.d; // the gradient w.r.t. the embeddings' output, left there by block 0
    this.tokens.forEach((t, n) => {
      for (let i = 0; i < D; i++) grad[t * D + i] += d[n * D + i];
    });
  }

  protected blockForward(g: LlamaGroup): void {
    const { dim: D, heads: H, kvHeads: KV, ff: FF, seq: T } = this.spec.shape;
    const { hd, Q, K } = this.spec.widths;
    const N = this.rows * T;
    const b = g.block;
    const at = (k: BlockName) => this.name(b, k);
    const a = (k: BlockName) => this.v[at(k)];
    const x = this.v[this.input(b)];
    const qk = this.spec.qkNorm;
    rmsNorm(x, this.view('p', g, 'input_layernorm.weight'), N, D, this.spec.rmsEps, a('n1'), a('r1'));
    this.linear(g, at('n1'), 'q_proj', at(qk ? 'q0' : 'q'), N, D, Q);
    this.linear(g, at('n1'), 'k_proj', at(qk ? 'k0' : 'k'), N, D, K);
    this.linear(g, at('n1'), 'v_proj', at('v'), N, D, K);
    if (qk) {
      // Qwen3: each head of q and of k RMSNorm-ed over its own width, before rotary
      rmsNorm(a('q0'), this.view('p', g, 'self_attn.q_norm.weight'), N * H, hd, this.spec.rmsEps, a('q'), a('rq'));
      rmsNorm(a('k0'), this.view('p', g, 'self_attn.k_norm.weight'), N * KV, hd, this.spec.rmsEps, a('k'), a('rk'));
    }
    rope(a('q'), N, T, H, hd, this.tables);
    rope(a('k'), N, T, KV, hd, this.tables);
    attentionForward(this.attentionHost(b));
    this.linear(g, at('y'), 'o_proj', at('xmid'), N, Q, D);
    const xmid = a('xmid');
    for (let i = 0; i < N * D; i++) xmid[i] += x[i];
    rmsNorm(xmid, this.view('p', g, 'post_attention_layernorm.weight'), N, D, this.spec.rmsEps, a('n2'), a('r2'));
    this.linear(g, at('n2'), 'gate_proj', at('gate'), N, D, FF);
    this.linear(g, at('n2'), 'up_proj', at('up'), N, D, FF);
    swiglu(a('gate'), a('up'), a('h'));
    this.linear(g, at('h'), 'down_proj', at('out'), N, FF, D);
    const out = a('out');
    for (let i = 0; i < N * D; i++) out[i] += xmid[i];
  }

  /** Backward through a block: region d holds the gradient w.r.t. its output on entry, w.r.t. its input on exit. */
  protected blockBackward(g: LlamaGroup): void {
    if (this.recompute) this.blockForward(g); // the insides again, from the kept input and the loaded parameters
    const { dim: D, heads: H, kvHeads: KV, ff: FF, seq: T } = this.spec.shape;
    const { hd, Q, K } = this.spec.widths;
    const N = this.rows * T;
    const b = g.block;
    const at = (k: BlockName) => this.name(b, k);
    const a = (k: BlockName) => this.v[at(k)];
    const { d, dx2, dq, dk } = this.v;
    const dx = this.v.dx.subarray(0, N * D); // the region is Q wide where the heads are (o_proj's input)
    const sum = (into: Float32Array, from: Float32Array) => {
      for (let i = 0; i < into.length; i++) into[i] += from[i];
    };
    // MLP half: out = xmid + down(silu(gate(n2)) · up(n2)); the residual passes d on to xmid.
    this.linearBack(g, at('h'), 'd', 'down_proj', 'df', N, FF, D);
    swigluBackward(a('gate'), a('up'), this.v.df, this.v.df, this.v.df2); // df: dgate (read dh first, per element), df2: dup
    this.linearBack(g, at('n2'), 'df', 'gate_proj', 'dx', N, D, FF);
    this.linearBack(g, at('n2'), 'df2', 'up_proj', 'dx2', N, D, FF);
    sum(dx, dx2);
    rmsNormBackward(
      a('xmid'),
      this.view('p', g, 'post_attention_layernorm.weight'),
      a('r2'),
      dx,
      N,
      D,
      this.view('g', g, 'post_attention_layernorm.weight'),
      d,
    );
    // Attention half: xmid = x + o(attn(rope(q(n1)), rope(k(n1)), v(n1))).
    this.linearBack(g, at('y'), 'd', 'o_proj', 'dx', N, Q, D);
    attentionBackward(this.attentionHost(b)); // dx (dy) -> dq, dk, dv
    rope(dq, N, T, H, hd, this.tables, true);
    rope(dk, N, T, KV, hd, this.tables, true);
    this.linearBack(g, at('n1'), this.throughQkNorm(g, b, 'q', dq), 'q_proj', 'dx', N, D, Q);
    this.linearBack(g, at('n1'), this.throughQkNorm(g, b, 'k', dk), 'k_proj', 'dx2', N, D, K);
    sum(dx, dx2);
    this.linearBack(g, at('n1'), 'dv', 'v_proj', 'dx2', N, D, K);
    sum(dx, dx2);
    rmsNormBackward(this.v[this.input(b)], this.view('p', g, 'input_layernorm.weight'), a('r1'), dx, N, D, this.view('g', g, 'input_layernorm.weight'), d);
  }

  /** Qwen3's per-head norm of q or k, backward: `dy`, the gradient after it, taken back to before it in
   *  region dqn (its weight's gradient summed); the region the projection's backward reads. */
  private throughQkNorm(g: LlamaGroup, b: number, which: 'q' | 'k', dy: Float32Array): string {
    if (!this.spec.qkNorm) return which === 'q' ? 'dq' : 'dk';
    const { hd } = this.spec.widths;
    const heads = which === 'q' ? this.spec.shape.heads : this.spec.shape.kvHeads;
    const rows = this.rows * this.spec.shape.seq * heads;
    const out = this.v.dqn.subarray(0, rows * hd);
    out.fill(0);
    const w = `self_attn.${which}_norm.weight`;
    const [x0, r]: BlockName[] = which === 'q' ? ['q0', 'rq'] : ['k0', 'rk'];
    rmsNormBackward(this.v[this.name(b, x0)], this.view('p', g, w), this.v[this.name(b, r)], dy, rows, hd, this.view('g', g, w), out);
    return 'dqn';
  }

  private attentionHost(b: number): AttentionHost {
    const { hd, Q, K } = this.spec.widths;
    return { arena: this.arena, v: this.v, shape: this.spec.shape, hd, Q, K, rows: this.rows, region: (k) => this.name(b, k) };
  }

  protected headForward(g: LlamaGroup): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    rmsNorm(this.v[this.input(L)], this.view('p', g, 'model.norm.weight'), N, D, this.spec.rmsEps, this.v.nf, this.v.rf);
    this.linear(g, 'nf', 'lm_head', 'logits', N, D, V);
  }

  protected headBackward(g: LlamaGroup): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    this.linearBack(g, 'nf', 'dl', 'lm_head', 'dx', N, D, V);
    this.v.d.fill(0);
    rmsNormBackward(
      this.v[this.input(L)],
      this.view('p', g, 'model.norm.weight'),
      this.v.rf,
      this.v.dx,
      N,
      D,
      this.view('g', g, 'model.norm.weight'),
      this.v.d,
    );
  }
}
