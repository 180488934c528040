import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Real sockets and processes: keep files from fighting over 2 cores.
    fileParallelism: false,
    // The JSON report is what .ci/run counts ("N passed, N failed").
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
    projects: [
      { extends: true, test: { name: 'all' } },
      // The products run on the machine's BLAS where there is one (tensor/blas.ts): everything that checks
      // numbers against PyTorch or theory runs once more on the WebAssembly kernels alone.
      {
        extends: true,
        test: {
          name: 'kernels without BLAS',
          include: ['test/shared/training/**/*.test.ts', 'test/shared/tensor/**/*.test.ts'],
          env: { ZEROWIRE_BLAS: 'off' },
        },
      },
    ],
  },
});
