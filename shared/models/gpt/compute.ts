// The GPT's forward and backward passes, one unit at a time (embeddings, a block, ln_f + head), so a
// scheme can hand over each unit's parameters just in time, as for the MLP. What the forward pass keeps
// for the backward pass is laid out as named activation regions per batch shape and counted
// (activationBytes); the rest of the arena is scratch.
import { Decoder, type DecoderRegions } from '../../training/decoder.js';
import type { GptGroup, GptSpec } from './spec.js';
import { arenaGelu, arenaGeluBackward, arenaLayerNorm, arenaLayerNormBackward } from '../../training/activations.js';
import { gptRegions, type BlockName, type BlockRegion, type GptRegion, type GptViews } from './regions.js';
import { attentionBackward, attentionForward } from './attention.js';
import { linearBackward, linearForward } from '../../training/lora-ops.js';

/**
 * The GPT's passes on a kernel arena. Every product runs in the MLP's WebAssembly SIMD kernels
 * (tensor/wasm/matmul.wat), forward and backward: the Linear layers (q/k/v, the attention's output
 * projection, the MLP's two layers, the head) and the attention's per-head q·kᵀ and P·v. Softmax,
 * LayerNorm, GELU and the residuals run in JavaScript on views of the same memory.
 */
export class Gpt extends Decoder<GptGroup, GptViews> {
  declare readonly spec: GptSpec;

  constructor(spec: GptSpec, opts: { threads?: number; threadScript?: URL; recompute?: boolean } = {}) {
    super(spec, opts);
  }

  protected regions(rows: number): DecoderRegions {
    const { activations, scratch } = gptRegions(this.spec, rows, this.recompute);
    return { activations: activations as Record<string, number>, scratch };
  }

  /** Where each of the unit's tensors starts inside the unit (in elements), by short name. */
  private offsets(g: GptGroup): Record<string, number> {
    const all = g.borrows ? [...g.tensors, g.borrows.tensor] : g.tensors; // a tied head's weight after its own
    return Object.fromEntries(all.map((t) => [t.name.replace(/^h\.\d+\./, ''), t.offset - g.offset]));
  }

  /** The region of block b's activation `name`. */
  private actName(b: number, name: BlockName): BlockRegion {
    return name === 'out' || !this.recompute ? `b${b}.${name}` : `r.${name}`;
  }

  private act(b: number, name: BlockName): Float32Array {
    return this.v[this.actName(b, name)];
  }

  private input(block: number): Float32Array {
    return block === 0 ? this.v.x0 : this.act(block - 1, 'out');
  }

  /** out = x·Wᵀ + b (+ its adapter's) in the SIMD kernels; W and b at element offsets of the loaded unit (b null: none). */
  private linear(g: GptGroup, x: GptRegion, w: number, b: number | null, out: GptRegion, rows: number, inputs: number, outputs: number): void {
    linearForward(this.arena, this.linearCall(g, x, w, b, rows, inputs, outputs), out);
  }

  /** The backward of linear(): dW (and db) into the unit's gradient unless frozen, dX = dY·W into `dx`. */
  private linearBack(
    g: GptGroup,
    x: GptRegion,
    dy: GptRegion,
    w: number,
    b: number | null,
    dx: GptRegion,
    rows: number,
    inputs: number,
    outputs: number,
  ): void {
    linearBackward(this.arena, this.linearCall(g, x, w, b, rows, inputs, outputs), dy, dx);
  }

  protected embeddingsForward(): void {
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

  protected embeddingsBackward(grad: Float32Array): void {
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

  protected blockForward(g: GptGroup): void {
    const { dim: D, seq: T } = this.spec.shape;
    const N = this.rows * T;
    const b = g.block;
    const o = this.offsets(g);
    const w = (name: string) => this.view('p', g, name);
    const at = (name: BlockName) => this.actName(b, name);
    const x = this.input(b);
    const a = (name: BlockName) => this.act(b, name);
    arenaLayerNorm(this.arena, x, w('ln_1.weight'), w('ln_1.bias'), N, D, a('ln1'), a('st1'));
    this.linear(g, at('ln1'), o['attn.qkv.weight'], o['attn.qkv.bias'], at('qkv'), N, D, 3 * D);
    attentionForward(this.attentionHost(), (name) => this.actName(b, name));
    this.linear(g, at('y'), o['attn.proj.weight'], o['attn.proj.bias'], at('xmid'), N, D, D);
    const xmid = a('xmid');
    for (let i = 0; i < N * D; i++) xmid[i] += x[i];
    arenaLayerNorm(this.arena, xmid, w('ln_2.weight'), w('ln_2.bias'), N, D, a('ln2'), a('st2'));
    this.linear(g, at('ln2'), o['mlp.fc.weight'], o['mlp.fc.bias'], at('hpre'), N, D, 4 * D);
    arenaGelu(this.arena, a('hpre'), a('hact'));
    this.linear(g, at('hact'), o['mlp.proj.weight'], o['mlp.proj.bias'], at('out'), N, 4 * D, D);
    const out = a('out');
    for (let i = 0; i < N * D; i++) out[i] += xmid[i];
  }

  /** Backward through a block: region d holds the gradient w.r.t. its output on entry, w.r.t. its input
   *  on exit. */
  protected blockBackward(g: GptGroup): void {
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
    this.linearBack(g, at('hact'), 'd', o['mlp.proj.weight'], o['mlp.proj.bias'], 'd4', N, 4 * D, D);
    arenaGeluBackward(this.arena, a('hpre'), a('hact'), d4);
    this.linearBack(g, at('ln2'), 'd4', o['mlp.fc.weight'], o['mlp.fc.bias'], 'dx', N, D, 4 * D);
    arenaLayerNormBackward(this.arena, a('xmid'), w('ln_2.weight'), a('st2'), dx, N, D, dw('ln_2.weight'), dw('ln_2.bias'), d); // d = dxmid
    // Attention half: xmid = x + proj(attn(qkv(ln1(x)))).
    this.linearBack(g, at('y'), 'd', o['attn.proj.weight'], o['attn.proj.bias'], 'dx', N, D, D);
    attentionBackward(this.attentionHost(), (name) => this.actName(b, name));
    this.linearBack(g, at('ln1'), 'd3', o['attn.qkv.weight'], o['attn.qkv.bias'], 'dx', N, D, 3 * D);
    // The k bias adds q·b to a whole row of scores, which softmax ignores: its gradient is exactly zero,
    // and what the sum above leaves there is rounding noise (~1e-10), which Adam (dividing by sqrt(v) + eps)
    // would turn into steps of up to lr. It is set to the zero it is.
    dw('attn.qkv.bias').fill(0, D, 2 * D);
    arenaLayerNormBackward(this.arena, this.input(b), w('ln_1.weight'), a('st1'), dx, N, D, dw('ln_1.weight'), dw('ln_1.bias'), d); // d = dx
  }

  private attentionHost() {
    return { arena: this.arena, v: this.v, shape: this.spec.shape, rows: this.rows };
  }

  protected headForward(g: GptGroup): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    const o = this.offsets(g);
    arenaLayerNorm(this.arena, this.input(L), this.view('p', g, 'ln_f.weight'), this.view('p', g, 'ln_f.bias'), N, D, this.v.lnf, this.v.stf);
    this.linear(g, 'lnf', o['head.weight'], null, 'logits', N, D, V);
  }

  protected headBackward(g: GptGroup): void {
    const { dim: D, seq: T, vocab: V, layers: L } = this.spec.shape;
    const N = this.rows * T;
    const o = this.offsets(g);
    this.linearBack(g, 'lnf', 'dl', o['head.weight'], null, 'dx', N, D, V);
    this.v.d.fill(0);
    arenaLayerNormBackward(
      this.arena,
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
