import { defineConfig } from 'vitest/config';

const timeouts = { testTimeout: 60_000, hookTimeout: 120_000 };

export default defineConfig({
  test: {
    // Real sockets and processes: keep files from fighting over 2 cores (across both projects too).
    fileParallelism: false,
    // The JSON report is what .ci/run counts ("N passed, N failed").
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
    projects: [
      { test: { ...timeouts, name: 'all', include: ['test/**/*.test.ts'] } },
      // The products run on the machine's BLAS where there is one (tensor/blas.ts): what checks numbers
      // against PyTorch or theory runs once more on the WebAssembly kernels alone.
      {
        test: {
          ...timeouts,
          name: 'kernels without BLAS',
          include: ['test/shared/training/**/*.test.ts', 'test/shared/models/**/*.test.ts', 'test/shared/tensor/**/*.test.ts'],
          env: { ZEROWIRE_BLAS: 'off' },
        },
      },
    ],
  },
});
