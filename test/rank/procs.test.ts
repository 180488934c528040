// `zerowire rank --procs K`: K real rank processes from one command, all of one host.
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { logLines, runCli, startCoordinator } from '../helpers/cli.js';

/** Listen on `port` (resolves null if it is taken). */
function hold(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(null));
    s.listen(port, '0.0.0.0', () => resolve(s));
  });
}

/** A base port whose next `n` ports are all free now. */
async function freeRange(n: number): Promise<number> {
  for (let base = 20_000 + (process.pid % 2000) * 10; ; base += n) {
    const held = await Promise.all(Array.from({ length: n }, (_, i) => hold(base + i)));
    await Promise.all(held.map((s) => s && new Promise((r) => s.close(r))));
    if (held.every(Boolean)) return base;
  }
}

/** A coordinator for a tiny DP run of `world` ranks, listening. */
const coordinator = (world: number) =>
  startCoordinator(['--world', String(world), '--scheme', 'dp', '--model', '8,8', '--steps', '2', '--batch', '12', '--samples', '24']);

describe('rank --procs', () => {
  it('starts K rank processes that join, train and exit 0; the ring names one host', async () => {
    const c = await coordinator(3);
    const port = c.port;
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

  it('--procs 4 --peer-port P listens on P ... P+3, and the run completes', async () => {
    const base = await freeRange(4);
    const c = await coordinator(4);
    try {
      const ranks = await runCli(['rank', '--procs', '4', '--peer-port', String(base), '--coordinator', `ws://127.0.0.1:${c.port}`], 60_000);
      const done = await c.done;
      expect(done.code, done.stderr).toBe(0);
      expect(ranks.code, ranks.stderr).toBe(0);
      const ports = logLines(done.stderr)
        .filter((l) => / joined$/.test(String(l.msg)))
        .map((l) => Number(String(l.address).split(':').pop()));
      expect(ports.sort()).toEqual([base, base + 1, base + 2, base + 3]);
    } finally {
      c.child.kill('SIGKILL');
    }
  }, 60_000);

  it('--procs 4 --peer-port P with P+1 taken ends within seconds, in one line naming the port, exit 3', async () => {
    const base = await freeRange(4);
    const taken = (await hold(base + 1))!;
    const c = await coordinator(4);
    try {
      const t0 = Date.now();
      const ranks = await runCli(['rank', '--procs', '4', '--peer-port', String(base), '--coordinator', `ws://127.0.0.1:${c.port}`], 60_000);
      // Not a speed check: the other three would otherwise wait out the coordinator's 120 s join window. Four
      // Node processes starting on a loaded 2-core machine took 10.6 s once (a fresh clone's CI beside other work).
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(ranks.code).toBe(3);
      const errors = logLines(ranks.stderr).filter((l) => l.level === 50);
      expect(String(errors[0].msg)).toBe(
        `the ring port (--peer-port) 0.0.0.0:${base + 1} is already in use (EADDRINUSE): choose another port, or 0 for any free one`,
      );
      expect(String(errors[1].msg)).toMatch(new RegExp(`^rank process 2 of 4 \\(pid \\d+, ring port ${base + 1}\\) exited with code 3$`));
      expect(ranks.stderr).not.toMatch(/\n\s+at /);
    } finally {
      c.child.kill('SIGKILL');
      taken.close();
    }
  }, 60_000);

  it('a port in use for the coordinator: one line, exit 3', async () => {
    const base = await freeRange(1);
    const taken = (await hold(base))!;
    try {
      const r = await runCli(['coordinator', '--world', '2', '--port', String(base)], 10_000);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(new RegExp(`the coordinator's port \\(--port\\) 0\\.0\\.0\\.0:${base} is already in use \\(EADDRINUSE\\)`));
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      taken.close();
    }
  });

  it('refuses --procs with a rank id, and a --procs that is not a count', async () => {
    const withId = await runCli(['rank', '--procs', '2', '--rank-id', '1', '--coordinator', 'ws://127.0.0.1:1'], 10_000);
    expect(withId.code).toBe(2);
    expect(withId.stderr).toMatch(/--procs 2 with a rank id \(1\): each process needs its own id/);
    const zero = await runCli(['rank', '--procs', '0', '--coordinator', 'ws://127.0.0.1:1'], 10_000);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--procs: 0 must be an integer from 1 to 256/);
  });
});
