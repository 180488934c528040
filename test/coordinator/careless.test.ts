// Careless and hostile input, through the real CLI: each case failed before its fix (issue "round two").
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { encodeMessage, PROTOCOL_VERSION } from '../../shared/control/messages.js';
import { CLI, eventually, logLines, runCli, startCli } from '../helpers/cli.js';

const require = createRequire(import.meta.url);
const SMALL = ['--model', '8,16,4', '--batch', '8', '--samples', '32', '--steps', '3'];

/** The coordinator's own error lines (not those forwarded from its ranks). */
const coordinatorErrors = (stderr: string) => logLines(stderr).filter((l) => l.level === 50 && (l.name === 'local' || l.name === 'coordinator'));

describe('careless and hostile input', () => {
  it("a diverging run is reported as divergence, in the rank's own words, not as a protocol violation", async () => {
    const r = await runCli(['local', '--world', '2', '--lr', '1e30', '--scheme', 'dp,zero3', ...SMALL], 30_000);
    expect(r.code).toBe(1);
    const [err] = coordinatorErrors(r.stderr);
    expect(String(err.msg)).toMatch(/rank \d \(.*\) during dp step \d+ failed: rank \d: training diverged: the loss is NaN at step \d+ of DP/);
    expect(r.stderr).not.toMatch(/malformed|disconnected \(1000/);
  });

  it("an output location that cannot be written is refused before any rank starts, with the system's reason", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'zerowire-outdir-'));
    // A read-only file system (a tmpfs mounted ro, where this test may mount): EROFS, not the ENOENT a
    // recursive mkdir says.
    const ro = join(folder, 'ro');
    mkdirSync(ro);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', ro]).status === 0;
    if (!mounted) console.warn('read-only --dump case skipped: cannot mount a tmpfs here (not root)');
    try {
      for (const [args, want] of [
        [['--out', '/proc/no-such-dir/report.json'], /--out: cannot write in \/proc\/no-such-dir \(ENOENT\)/],
        [['--out', folder], new RegExp(`--out: ${folder} is a folder; give a file name \\(e\\.g\\. ${folder}/report\\.json\\)`)],
        [['--html', folder], new RegExp(`--html: ${folder} is a folder; give a file name`)],
        [['--dump', '/etc/passwd/dump'], /--dump: cannot make the folder \/etc\/passwd\/dump \(ENOTDIR\)/],
        ...(mounted ? [[['--dump', join(ro, 'a', 'dump')], /--dump: cannot make the folder .*\/ro\/a\/dump \(EROFS\)/] as const] : []),
        [['--checkpoint-every', '1', '--checkpoint-dir', '/etc/passwd/ck'], /--checkpoint-dir: cannot make the folder \/etc\/passwd\/ck \(ENOTDIR\)/],
      ] as const) {
        const t0 = Date.now();
        const r = await runCli(['local', '--world', '2', ...SMALL, ...args], 30_000);
        expect(r.code).toBe(2);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(want);
        expect(logLines(r.stderr).some((l) => /joined/.test(String(l.msg)))).toBe(false);
        expect(Date.now() - t0).toBeLessThan(10_000);
      }
    } finally {
      if (mounted) spawnSync('umount', [ro]);
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a checkpoint shard with one flipped bit is refused on resume, the file named in the verdict', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-flip-'));
    try {
      const run = ['local', '--world', '2', '--scheme', 'zero1', '--model', '8,16,4', '--batch', '8', '--samples', '32', '--wire-dtype', 'fp32'];
      expect((await runCli([...run, '--steps', '2', '--checkpoint-every', '2', '--checkpoint-dir', dir], 30_000)).code).toBe(0);
      const file = join(dir, 'zero1', 'step-00000002', 'rank-00001.safetensors');
      const bytes = readFileSync(file);
      bytes[bytes.length - 3] ^= 0x10;
      writeFileSync(file, bytes);
      const r = await runCli([...run, '--steps', '5', '--resume', dir], 30_000);
      expect(r.code).toBe(1);
      const [err] = coordinatorErrors(r.stderr);
      expect(String(err.msg)).toMatch(
        /rank 1 \(.*\) during zero1 step \d+ failed: rank 1: checkpoint .*rank-00001\.safetensors: its bytes do not match the SHA-256 in index\.json/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s while a rank is still dialling stops it at once (exit %i), and it said whom it waits for', async (signal, code) => {
    const child = spawn(process.execPath, [CLI, 'rank', '--coordinator', 'ws://127.0.0.1:9', '--connect-timeout', '60'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(await eventually(() => /waiting for the coordinator at ws:\/\/127\.0\.0\.1:9/.test(stderr), 10_000)).toBe(true);
    const t0 = Date.now();
    child.kill(signal);
    expect(await exited).toBe(code);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("without a token: a warning on a non-loopback address, every refusal logged, and a stranger's garbage before the run does not end it", async () => {
    const coord = startCli(['coordinator', '--world', '2', '--port', '0', '--host', '0.0.0.0', ...SMALL, '--scheme', 'dp']);
    let stderr = '';
    coord.child.stderr!.on('data', (d) => (stderr += d));
    try {
      expect(await eventually(() => logLines(stderr).some((l) => typeof l.port === 'number'), 10_000)).toBe(true);
      const port = logLines(stderr).find((l) => typeof l.port === 'number')!.port as number;
      expect(logLines(stderr).some((l) => l.level === 40 && /no join token: anyone who can reach port/.test(String(l.msg)))).toBe(true);
      // A stranger joins (there is no token to stop it), then sends a garbage byte.
      const stranger = new WebSocket(`ws://127.0.0.1:${port}`);
      await new Promise((r) => stranger.once('open', r));
      stranger.send(encodeMessage({ type: 'join', version: PROTOCOL_VERSION, peerPort: 9, hostname: 'stranger', pid: 1 }));
      await new Promise((r) => setTimeout(r, 200));
      stranger.send(Buffer.from([0xc1]));
      expect(await eventually(() => /refused a connection from 127\.0\.0\.1: malformed message/.test(stderr), 5000)).toBe(true);
      // The run goes on: two real ranks join and it completes.
      const ranks = [0, 1].map(() => runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`, '--connect-timeout', '10'], 60_000));
      const done = await coord.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/^losses: one scheme \(DP\), nothing to compare$/m); // the run finished and reported
      for (const r of await Promise.all(ranks)) expect(r.code).toBe(0);
    } finally {
      coord.child.kill('SIGKILL');
    }
  });

  it('strangers get a join-sized message, seconds to join, and 64 places in line: none of it stops the run', async () => {
    const coord = startCli(['coordinator', '--world', '2', '--port', '0', '--host', '127.0.0.1', ...SMALL, '--scheme', 'dp'], { ZEROWIRE_TOKEN: 'secret' });
    let stderr = '';
    coord.child.stderr!.on('data', (d) => (stderr += d));
    // A stranger in another process: one WebSocket that sends a 1 MiB message before joining (it prints the
    // close code it got), then 70 raw TCP connections that never speak.
    const strangerCode = `
      const net = require('node:net');
      const { WebSocket } = require(${JSON.stringify(require.resolve('ws'))});
      const port = Number(process.argv[1]);
      const silent = [];
      const ws = new WebSocket('ws://127.0.0.1:' + port);
      ws.on('open', () => ws.send(Buffer.alloc(1 << 20)));
      ws.on('error', () => {});
      ws.on('close', (code) => {
        console.log('closed ' + code);
        for (let i = 0; i < 70; i++) silent.push(net.connect(port, '127.0.0.1').on('error', () => {}));
      });
      setTimeout(() => { for (const s of silent) s.destroy(); process.exit(0); }, 12000);
    `;

    try {
      expect(await eventually(() => logLines(stderr).some((l) => typeof l.port === 'number'), 10_000)).toBe(true);
      const port = logLines(stderr).find((l) => typeof l.port === 'number')!.port as number;
      const stranger = spawn(process.execPath, ['-e', strangerCode, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      stranger.stdout!.on('data', (d) => (out += d));
      expect(await eventually(() => /refused a connection from 127\.0\.0\.1: 64 connections are already waiting to join/.test(stderr), 5000)).toBe(true);
      // The real ranks arrive while every place is taken; they keep dialling until the silent ones are cut.
      const ranks = [0, 1].map(() =>
        runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`, '--connect-timeout', '20'], 60_000, { ZEROWIRE_TOKEN: 'secret' }),
      );
      expect(await eventually(() => /did not join within 5000 ms/.test(stderr), 10_000)).toBe(true);
      const done = await coord.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/^losses: one scheme \(DP\), nothing to compare$/m); // the run finished and reported
      for (const r of await Promise.all(ranks)) expect(r.code).toBe(0);
      stranger.kill();
      // The 1 MiB message from a connection that had not joined was refused unread (1009: too big), and said.
      expect(out).toMatch(/closed 1009/);
      expect(stderr).toMatch(/refused a connection from 127\.0\.0\.1: Max payload size exceeded/);
    } finally {
      coord.child.kill('SIGKILL');
    }
  });
});
