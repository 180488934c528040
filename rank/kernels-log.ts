// The one line a rank logs about how it computes: the products' backend, the kernels, threads and where.
import type { Logger } from 'pino';
import { flavoursOf } from '../shared/tensor/wasm/load.js';
import { productsBackend } from '../shared/tensor/blas.js';
import { modeledDevice, type ComputeMode } from '../shared/control/run-config.js';

export function logKernels(log: Logger, threads: number, mode: ComputeMode): void {
  const device = modeledDevice({ compute: mode });
  if (device) return void log.info({ compute: mode }, `compute: modeled on ${device} (no values; the cost model's time per layer)`);
  const kernels = flavoursOf('matmul')[0] ?? 'none';
  const what = {
    'relaxed-simd': 'WebAssembly SIMD with relaxed-SIMD fused multiply-add',
    simd: 'WebAssembly SIMD (this engine has no relaxed SIMD: a multiply, then an add)',
    none: 'none (this engine has no WebAssembly SIMD)',
  }[kernels];
  const products = productsBackend();
  const where = mode === 'thread' ? 'on a worker thread' : "on the rank's own thread";
  log.info(
    { kernels, products, threads, compute: mode },
    `products: ${products}; other kernels: ${what}; ${threads} thread${threads > 1 ? 's' : ''}; forward and backward ${where}`,
  );
}
