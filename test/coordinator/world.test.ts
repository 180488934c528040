// The expected world: a coordinator that waited for N ranks and got fewer refuses (or, with --min-world,
// runs with those and says so loudly); 'auto' never settles on a world of one unless told to.
import { describe, expect, it } from 'vitest';
import { logLines, runCli, startCoordinator } from '../helpers/cli.js';

const SMALL = ['--model', '8,8', '--steps', '2', '--batch', '12', '--samples', '24', '--scheme', 'dp'];

/** A coordinator with these options and `ranks` real ranks: every exit and the coordinator's output. */
async function run(options: string[], ranks: number) {
  const c = await startCoordinator([...SMALL, ...options]);
  try {
    const rankRuns = Array.from({ length: ranks }, () => runCli(['rank', '--coordinator', `ws://127.0.0.1:${c.port}`, '--connect-timeout', '10'], 30_000));
    const done = await c.done;
    return { done, ranks: await Promise.all(rankRuns), lines: logLines(done.stderr) };
  } finally {
    c.child.kill('SIGKILL');
  }
}

describe('the expected world', () => {
  it('--world 3 with 2 ranks: refused after the join timeout, naming how many joined; the ranks are told', async () => {
    const r = await run(['--world', '3', '--join-timeout', '2'], 2);
    expect(r.done.code).toBe(1);
    expect(String(r.lines.find((l) => l.level === 50)?.msg)).toMatch(/^only 2 of 3 ranks joined within 2 s: .*--min-world 2 would run with these$/);
    for (const rank of r.ranks) {
      expect(rank.code).toBe(1);
      expect(rank.stderr).toMatch(/run aborted by the coordinator: only 2 of 3 ranks joined/);
    }
  });

  it('--world 3 --min-world 2 with 2 ranks: runs at world 2, with a warning', async () => {
    const r = await run(['--world', '3', '--min-world', '2', '--join-timeout', '2'], 2);
    expect(r.done.code, r.done.stderr).toBe(0);
    const warning = r.lines.find((l) => l.level === 40 && /^WORLD SIZE/.test(String(l.msg)));
    expect(String(warning?.msg)).toMatch(/^WORLD SIZE 2, NOT 3: only 2 of the 3 expected ranks joined within 2 s: running with 2 \(--min-world 2\)$/);
    expect(r.done.stdout).toMatch(/^DP\s+2\s/m);
  });

  it("'auto' with one rank: refused, a world of one compares nothing", async () => {
    const r = await run(['--world', 'auto', '--settle', '0.5', '--join-timeout', '2'], 1);
    expect(r.done.code).toBe(1);
    expect(String(r.lines.find((l) => l.level === 50)?.msg)).toMatch(/^only 1 rank joined within 2 s: a world of one sends nothing over the network/);
    expect(r.ranks[0].code).toBe(1);
  });

  it("'auto' with one rank and --min-world 1: runs at world 1", async () => {
    const r = await run(['--world', 'auto', '--min-world', '1', '--settle', '0.5', '--join-timeout', '5'], 1);
    expect(r.done.code, r.done.stderr).toBe(0);
    expect(r.done.stdout).toMatch(/^DP\s+1\s/m);
  });
});
