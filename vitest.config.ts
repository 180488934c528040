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
  },
});
