// `zerowire rank --procs K`: K real rank processes from one command, all of one host.
import { describe, expect, it } from 'vitest';
import { eventually, logLines, runCli, startCli } from '../helpers/cli.js';

describe('rank --procs', () => {
  it('starts K rank processes that join, train and exit 0; the ring names one host', async () => {
    const c = startCli([
      'coordinator',
      '--world',
      '3',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--scheme',
      'dp',
      '--model',
      '8,8',
      '--steps',
      '2',
      '--batch',
      '6',
      '--samples',
      '12',
    ]);
    let err = '';
    c.child.stderr!.on('data', (d) => (err += d));
    expect(await eventually(() => /waiting for/.test(err), 10_000)).toBe(true);
    const port = logLines(err).find((l) => /waiting for/.test(String(l.msg)))!.port as number;
    const ranks = await runCli(['rank', '--procs', '3', '--coordinator', `ws://127.0.0.1:${port}`, '--peer-host', '127.0.0.1'], 60_000);
    const done = await c.done;
    expect(done.code, done.stderr).toBe(0);
    expect(ranks.code, ranks.stderr).toBe(0);
    const ring = logLines(done.stderr).find((l) => /^ring: /.test(String(l.msg)))!;
    const members = ring.ring as { pid: number; host: string }[];
    expect(new Set(members.map((m) => m.pid)).size).toBe(3);
    expect(new Set(members.map((m) => m.host))).toEqual(new Set(['127.0.0.1']));
    expect(String(ring.msg)).toMatch(/0 of 3 links cross hosts/);
  }, 60_000);

  it('refuses --procs with a rank id, and a --procs that is not a count', async () => {
    const withId = await runCli(['rank', '--procs', '2', '--rank-id', '1', '--coordinator', 'ws://127.0.0.1:1'], 10_000);
    expect(withId.code).toBe(2);
    expect(withId.stderr).toMatch(/--procs 2 with a rank id \(1\): each process needs its own id/);
    const zero = await runCli(['rank', '--procs', '0', '--coordinator', 'ws://127.0.0.1:1'], 10_000);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--procs: 0 must be an integer from 1 to 256/);
  });
});
