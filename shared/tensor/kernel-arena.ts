// A WebAssembly memory that the compute kernels (wasm/matmul.wat, and elementwise.wat's bf16 widening)
// work in, cut into named regions: the
// activations a forward pass keeps, one layer's parameters and gradient, the gradient flowing back. The
// memory only grows, and growing detaches every view, so regions are byte offsets and views are made
// when used, never kept.
import { KernelThreads, type ProductKernels } from './kernel-threads.js';
import { instantiate, type SimdFlavour } from './wasm/load.js';
import { newMemory } from './wasm/memories.js';
import { machineBlas, type Blas } from './blas.js';

const PAGE = 65536;
/** Multiply-adds from which a product goes to the BLAS (measured: see docs/performance.md). */
const BLAS_MIN_MACS = 32 * 1024;
/** A shared memory must state its largest size: 2 GiB of address space, reserved, not committed. */
const MAX_PAGES = 32768;

interface ComputeKernels extends ProductKernels {
  matmul_nn(a: number, b: number, c: number, M: number, N: number, K: number): void;
  matmul_tn(a: number, b: number, c: number, M: number, N: number, K: number): void;
  colsum(a: number, c: number, M: number, N: number): void;
}

interface ElementwiseKernels {
  widen_bf16(src: number, dst: number, n: number): void;
}

/** wasm/activations.wat: $n and $D multiples of 4. */
interface ActivationKernels {
  gelu(x: number, out: number, n: number): void;
  gelu_backward(x: number, act: number, g: number, n: number): void;
  layer_norm(x: number, w: number, b: number, out: number, stats: number, N: number, D: number): void;
  layer_norm_backward(x: number, w: number, stats: number, dy: number, dw: number, db: number, dx: number, N: number, D: number): void;
  causal_softmax(p: number, T: number, scale: number): void;
  causal_softmax_backward(p: number, dp: number, T: number, scale: number): void;
}

export class KernelArena {
  readonly memory: WebAssembly.Memory;
  readonly k: ComputeKernels & ElementwiseKernels & ActivationKernels;
  readonly flavour: SimdFlavour;
  private readonly regions = new Map<string, { at: number; bytes: number }>();
  private end = 0;

  /** Products shared out over the rank's kernel threads (one thread, or a BLAS: none). */
  readonly par: KernelThreads | null;
  /** The machine's BLAS for the products big enough to pay for a call, or null: the kernels do them all. */
  readonly blas: Blas | null;

  /** `flavour`: a build to use instead of the best this engine runs (the tests check both). `threads`:
   *  how many threads compute the products (the memory is then shared; `threadScript` is the compiled
   *  kernel-thread.js, which tests running from source pass in). */
  constructor(opts: { flavour?: SimdFlavour; threads?: number; threadScript?: URL; blas?: Blas | null } = {}) {
    const { flavour } = opts;
    this.blas = opts.blas === undefined ? machineBlas() : opts.blas;
    // With a BLAS, its own threads compute the products; the kernel threads are for the kernels alone.
    this.blas?.setThreads(opts.threads ?? 1);
    const threads = this.blas ? 1 : (opts.threads ?? 1);
    this.memory = threads > 1 ? newMemory({ initial: 1, maximum: MAX_PAGES, shared: true }) : newMemory({ initial: 1 });
    const products = instantiate<ComputeKernels>('matmul', this.memory, flavour);
    const elementwise = instantiate<ElementwiseKernels>('elementwise', this.memory);
    const activations = instantiate<ActivationKernels>('activations', this.memory);
    if (!products || !elementwise || !activations) throw new Error('the compute kernels need WebAssembly SIMD, which this JavaScript engine does not offer');
    this.k = { ...products.exports, ...elementwise.exports, ...activations.exports };
    this.flavour = products.flavour;
    this.par = threads > 1 ? new KernelThreads(products.exports, this.memory, products.flavour, threads, opts.threadScript) : null;
  }

  /** Y = X·Wᵀ + b (the BLAS, or shared out over the kernel threads, if any). */
  linearForward(x: number, w: number, b: number, y: number, M: number, K: number, N: number): void {
    if (this.useBlas(M, N, K)) {
      const out = this.view(y, M * N);
      const bias = this.view(b, N);
      for (let r = 0; r < M; r++) out.set(bias, r * N);
      this.blas!.sgemm(false, true, M, N, K, 1, this.view(x, M * K), K, this.view(w, N * K), K, 1, out, N);
    } else if (this.par) this.par.linearForward(x, w, b, y, M, K, N);
    else this.k.linear_forward(x, w, b, y, M, K, N);
  }

  /** C (M×N) = A (M×K) · B (K×N). */
  matmulNN(a: number, b: number, c: number, M: number, N: number, K: number): void {
    if (this.useBlas(M, N, K)) this.blas!.sgemm(false, false, M, N, K, 1, this.view(a, M * K), K, this.view(b, K * N), N, 0, this.view(c, M * N), N);
    else if (this.par) this.par.product(a, K * 4, 4, b, c, M, N, K);
    else this.k.matmul_nn(a, b, c, M, N, K);
  }

  /** C (M×N) = Aᵀ · B, A (K×M), B (K×N). */
  matmulTN(a: number, b: number, c: number, M: number, N: number, K: number): void {
    if (this.useBlas(M, N, K)) this.blas!.sgemm(true, false, M, N, K, 1, this.view(a, K * M), M, this.view(b, K * N), N, 0, this.view(c, M * N), N);
    else if (this.par) this.par.product(a, 4, M * 4, b, c, M, N, K);
    else this.k.matmul_tn(a, b, c, M, N, K);
  }

  /** Which backend computes the products. */
  get backend(): string {
    return this.blas ? `${this.blas.name} for products of ${BLAS_MIN_MACS} multiply-adds and more` : `WebAssembly ${this.flavour}`;
  }

  /** A product worth a call into the BLAS: below this the call costs more than the kernels' work. */
  private useBlas(M: number, N: number, K: number): boolean {
    return this.blas !== null && M * N * K >= BLAS_MIN_MACS;
  }

  private view(at: number, floats: number): Float32Array {
    return new Float32Array(this.memory.buffer, at, floats);
  }

  /** Bytes of memory the arena holds (what it has grown to). */
  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Lay out regions of `floats` fp32 elements each, in order, replacing any earlier layout. */
  layout(regions: Record<string, number>): void {
    this.regions.clear();
    let at = 0;
    for (const [name, floats] of Object.entries(regions)) {
      const bytes = Math.ceil((floats * 4) / 16) * 16; // 16-byte aligned starts
      this.regions.set(name, { at, bytes });
      at += bytes;
    }
    this.end = at;
    const need = Math.ceil(this.end / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (need > 0) this.memory.grow(need);
  }

  /** Byte offset of a region, for the kernels. */
  at(name: string): number {
    const r = this.regions.get(name);
    if (!r) throw new Error(`kernel arena: no region ${name}`);
    return r.at;
  }

  /** A region (or `n` elements of it from element `from`) as fp32: a fresh view, valid until the next layout(). */
  f32(name: string, n?: number, from = 0): Float32Array {
    const r = this.regions.get(name);
    if (!r) throw new Error(`kernel arena: no region ${name}`);
    const len = n ?? r.bytes / 4 - from;
    if ((from + len) * 4 > r.bytes) throw new RangeError(`kernel arena: ${name} holds ${r.bytes / 4} floats, asked for ${from}+${len}`);
    return new Float32Array(this.memory.buffer, r.at + from * 4, len);
  }

  /** Copy `src` (fp32, or bf16 bits widened on the way) into region `name` from element `from`. */
  load(name: string, src: Float32Array | Uint16Array, from = 0): void {
    if (src instanceof Float32Array) return void this.f32(name, src.length, from).set(src);
    // bf16 bits: stage them at the region's far end (it has room for the fp32 result; half of that holds
    // the bits), then widen front to back: element i's write (bytes 4i..4i+3) never reaches bits not yet read,
    // nor (the region holding from + length floats) what an earlier load put before `from`.
    const r = this.regions.get(name)!;
    const to = r.at + 4 * from;
    const stage = r.at + r.bytes - src.byteLength;
    if (stage < to + src.byteLength) throw new RangeError(`kernel arena: ${name} cannot stage ${src.length} bf16 values from ${from}`);
    new Uint16Array(this.memory.buffer, stage, src.length).set(src);
    this.k.widen_bf16(stage, to, src.length);
  }
}
