// The machine's BLAS for the products (sgemm), through koffi, a maintained FFI package with prebuilt
// binaries: an optimized BLAS runs a big product at about twice what the WebAssembly kernels reach (WASM-128
// tops out near 56 GFLOP/s on this CPU; OpenBLAS does 83-110 on one thread). Only an optimized BLAS is used
// (OpenBLAS, BLIS or MKL, told by a symbol of its own): the reference BLAS is slower than the WebAssembly
// kernels, which stay the fallback. ZEROWIRE_BLAS=off turns it off; ZEROWIRE_BLAS=/path/lib.so picks a
// library. It works on views of any memory, the arena's WebAssembly memory included (no copy).
import { createRequire } from 'node:module';
import type { LibraryHandle } from 'koffi';

type CFunction = ReturnType<LibraryHandle['func']>;

const ROW_MAJOR = 101;
const NO_TRANS = 111;
const TRANS = 112;

export interface Blas {
  /** Which library, e.g. "OpenBLAS 0.3.21 (libopenblas.so.0)". */
  readonly name: string;
  /** C = alpha·op(A)·op(B) + beta·C, row-major. */
  sgemm(
    transA: boolean,
    transB: boolean,
    M: number,
    N: number,
    K: number,
    alpha: number,
    A: Float32Array,
    lda: number,
    B: Float32Array,
    ldb: number,
    beta: number,
    C: Float32Array,
    ldc: number,
  ): void;
  /** Threads the library computes one product with (OpenBLAS: per process). */
  setThreads(n: number): void;
}

/** Libraries tried in order when none is named. */
const CANDIDATES = ['libopenblas.so.0', 'libopenblas.so', 'libblis.so.4', 'libblis.so', 'libmkl_rt.so', 'libcblas.so.3', 'libblas.so.3', 'libopenblas.dylib'];

/** Why the machine's BLAS is not used (null while it is, or before anyone asked). */
let why: string | null = null;
let loaded: Blas | null | undefined;

/** The machine's optimized BLAS, loaded once per thread, or null (then `blasMissing()` says why). */
export function machineBlas(): Blas | null {
  if (loaded !== undefined) return loaded;
  const wanted = process.env.ZEROWIRE_BLAS;
  if (wanted === 'off') {
    why = 'ZEROWIRE_BLAS=off';
    return (loaded = null);
  }
  // Loaded on first use, and only here: without its native binary (an image built with --ignore-scripts on
  // a platform it has no prebuilt one for) the kernels still run.
  let koffi: typeof import('koffi');
  try {
    koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
  } catch (err) {
    why = `koffi could not load (${(err as Error).message.split('\n')[0]})`;
    return (loaded = null);
  }
  const tried: string[] = [];
  for (const path of wanted ? [wanted] : CANDIDATES) {
    const blas = open(koffi, path, tried);
    if (blas) return (loaded = blas);
  }
  why = tried.length ? tried.join('; ') : 'no BLAS library found';
  return (loaded = null);
}

/** What computes this process's products, for the logs and the report. */
export function productsBackend(): string {
  const blas = machineBlas();
  return blas ? blas.name : `WebAssembly SIMD kernels (no optimized BLAS: ${why ?? 'none found'})`;
}

/** Why no BLAS is used: for the logs and the report. */
export function blasMissing(): string | null {
  return why;
}

function open(koffi: typeof import('koffi'), path: string, tried: string[]): Blas | null {
  let lib: LibraryHandle;
  try {
    lib = koffi.load(path);
  } catch (err) {
    // A library the user named must be there; one of the usual names that is not is no news.
    if (process.env.ZEROWIRE_BLAS === path) tried.push(`ZEROWIRE_BLAS=${path} cannot be loaded (${(err as Error).message.split('\n')[0]})`);
    return null;
  }
  const kind = optimizedKind(lib);
  if (!kind) {
    tried.push(`${path} is not an optimized BLAS (a reference BLAS would be slower than the WebAssembly kernels; install libopenblas0-pthread)`);
    return null;
  }
  let sgemm: CFunction;
  try {
    sgemm = lib.func('void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int)');
  } catch {
    tried.push(`${path} has no cblas_sgemm`);
    return null;
  }
  const setThreads = kind.threads ? lib.func(kind.threads) : null;
  return {
    name: `${kind.name} (${path})`,
    sgemm: (ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) =>
      sgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc),
    setThreads: (n) => setThreads?.(n),
  };
}

/** An optimized BLAS says what it is through a function of its own. */
function optimizedKind(lib: LibraryHandle): { name: string; threads: string | null } | null {
  const probes = [
    { fn: 'const char *openblas_get_config()', name: (s: string) => `OpenBLAS ${s.split(' ')[1] ?? ''}`.trim(), threads: 'void openblas_set_num_threads(int)' },
    { fn: 'const char *bli_info_get_version_str()', name: (s: string) => `BLIS ${s}`, threads: 'void bli_thread_set_num_threads(int64_t)' },
    { fn: 'int MKL_Get_Max_Threads()', name: () => 'MKL', threads: 'void MKL_Set_Num_Threads(int)' },
  ];
  for (const p of probes) {
    try {
      const f = lib.func(p.fn);
      const out = f() as unknown;
      return { name: p.name(typeof out === 'string' ? out : ''), threads: p.threads };
    } catch {
      /* not this one */
    }
  }
  return null;
}
