// The common clock and the split of exposed communication into waiting for peers and transfer: the pure
// arithmetic here, and a real run with one rank slow on purpose, whose delay must land in the others'
// wait and not in anyone's transfer.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateOffset, waitAndTransfer } from '../../../shared/accounting/clock.js';
import type { Report } from '../../../shared/accounting/report.js';
import { eventually, logLines, runCli, startCli } from '../../helpers/cli.js';

describe('common clock', () => {
  it('keeps the shortest round trip, whose half is the uncertainty', () => {
    // The coordinator's clock runs 100 ms ahead; the second sample went out and back fastest.
    const est = estimateOffset([
      { t0: 0, t1: 105, t2: 10 },
      { t0: 20, t1: 121, t2: 22 },
      { t0: 30, t1: 140, t2: 50 },
    ]);
    expect(est).toEqual({ offsetMs: 100, uncertaintyMs: 1 });
  });

  it('wait runs until the last rank entered; transfer from then until each rank left', () => {
    // Two collectives, three ranks; rank 2 enters the first 30 ms late.
    const entry = [
      [0, 100],
      [0, 100],
      [30, 100],
    ];
    const exit = [
      [40, 110],
      [41, 111],
      [40, 110],
    ];
    expect(waitAndTransfer(entry, exit)).toEqual({ wait: [30, 30, 0], transfer: [20, 22, 20] });
    expect(waitAndTransfer([[0], [0, 1]], [[1], [1, 2]])).toBeNull();
  });

  it('collectives started together are counted once, and one moving while another waits is transfer', () => {
    // Two collectives entered at once by rank 0 (t = 0), by rank 1 at 60: rank 0 waited 60 ms, not 120.
    expect(
      waitAndTransfer(
        [
          [0, 0],
          [60, 60],
        ],
        [
          [70, 75],
          [70, 75],
        ],
      ),
    ).toEqual({ wait: [60, 0], transfer: [15, 15] });
    // Rank 0 enters A at 0 and B at 10; rank 1 enters A at 0 and B at 40. A moves 0..50 on both, so rank 0's
    // wait for B (10..40) is covered by A's transfer: no wait at all.
    expect(
      waitAndTransfer(
        [
          [0, 10],
          [0, 40],
        ],
        [
          [50, 60],
          [50, 60],
        ],
      ),
    ).toEqual({ wait: [0, 0], transfer: [60, 60] });
  });
});

describe('a straggler on purpose', () => {
  it("one rank idling 60 ms before every step puts ~60 ms in the others' wait, not in any transfer", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-straggle-'));
    const out = join(dir, 'report.json');
    const coord = startCli([
      'coordinator',
      '--world',
      '4',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--scheme',
      'dp',
      '--model',
      '16,64,4',
      '--batch',
      '16',
      '--samples',
      '64',
      '--steps',
      '12',
      '--out',
      out,
    ]);
    let stderr = '';
    coord.child.stderr!.on('data', (d) => (stderr += d));
    try {
      expect(await eventually(() => logLines(stderr).some((l) => typeof l.port === 'number'), 10_000)).toBe(true);
      const port = logLines(stderr).find((l) => typeof l.port === 'number')!.port as number;
      // Ranks are numbered in join order: the slow one joins last, so it is rank 3.
      const fast = [0, 1, 2].map(() => runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`], 60_000));
      expect(await eventually(() => logLines(stderr).filter((l) => /joined$/.test(String(l.msg))).length === 3, 10_000)).toBe(true);
      const slow = runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`, '--straggle-ms', '60'], 60_000);
      expect((await coord.done).code).toBe(0);
      for (const r of await Promise.all([...fast, slow])) expect(r.code).toBe(0);
      const row = (JSON.parse(readFileSync(out, 'utf8')) as Report).rows[0];
      const { waitByRank, transferByRank } = row.split!;
      for (const r of [0, 1, 2]) {
        expect(waitByRank[r], `rank ${r} waits for the straggler`).toBeGreaterThan(40);
        expect(waitByRank[r]).toBeLessThan(90);
      }
      expect(waitByRank[3], 'the straggler itself hardly waits').toBeLessThan(15);
      for (const t of transferByRank) expect(t, 'transfer stays the network and the arithmetic').toBeLessThan(20);
    } finally {
      coord.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
