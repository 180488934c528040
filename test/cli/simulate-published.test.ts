// ZeRO++'s published speed-ups over ZeRO-3 at 384 GPUs, as docs/simulate.md simulates them: 24 hosts × 16
// V100, an 18B GPT, checkpointed with the recompute's gather kept, every collective awaited. Each case's
// simulated speed-up lies within 20% of the published figure or range (the paper's "up to 2.16x" and the
// blog's "about 2x on average" at 100 Gbit/s; the blog's ranges at 400 Gbit/s).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const CASES = [
  { nics: 1, tokens: 2048, published: [2, 2.16] },
  { nics: 1, tokens: 1024, published: [2, 2.16] },
  { nics: 4, tokens: 1024, published: [1.28, 1.36] },
  { nics: 4, tokens: 2048, published: [1.24, 1.29] },
];

describe('zerowire simulate against the published ZeRO++ speed-ups', () => {
  it.each(CASES)(
    '$nics × 100 Gbit, $tokens tokens per GPU: within 20% of $published',
    async ({ nics, tokens, published }) => {
      const out = join(mkdtempSync(join(tmpdir(), 'zw-pub-')), 'r.json');
      const r = await runCli(
        [
          'simulate',
          ...['--compute', 'model:v100', '--model', `gpt:40,6144,48,${tokens}`, '--world', '384', '--hosts', '24'],
          ...['--nics', String(nics), '--nic-gbit', '100', '--steps', '2', '--batch', '384'],
          ...['--scheme', 'zero3,zeropp', '--recompute', '--overlap', 'off', '--out', out],
        ],
        120_000,
      );
      expect(r.code, r.stderr).toBe(0);
      const rows = JSON.parse(readFileSync(out, 'utf8')).rows as { scheme: string; time: { stepMs: number } }[];
      const step = (s: string) => rows.find((x) => x.scheme === s)!.time.stepMs;
      const speedUp = step('zero3') / step('zeropp');
      expect(speedUp).toBeGreaterThanOrEqual(0.8 * published[0]);
      expect(speedUp).toBeLessThanOrEqual(1.2 * published[1]);
    },
    150_000,
  );
});
