// Who may join, and what a stranger's bytes do to the coordinator: a real coordinator process.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { pack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { PROTOCOL_VERSION } from '../../shared/control/messages.js';
import { eventually, logLines, runCli, startCli } from '../helpers/cli.js';
import { seeded } from '../helpers/seed.js';

const random = seeded();

const TOKEN = 'correct horse battery staple';
const MODEL = '16,32,4';
let coordinator: ReturnType<typeof startCli>;
let stderr = '';
let port = 0;

beforeAll(async () => {
  coordinator = startCli(
    [
      'coordinator',
      '--world',
      '2',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--model',
      MODEL,
      '--steps',
      '3',
      '--batch',
      '8',
      '--samples',
      '32',
      '--scheme',
      'dp,zero3',
    ],
    { ZEROWIRE_TOKEN: TOKEN },
  );
  coordinator.child.stderr!.on('data', (d) => (stderr += d));
  expect(await eventually(() => logLines(stderr).some((l) => typeof l.port === 'number'), 10_000)).toBe(true);
  port = logLines(stderr).find((l) => typeof l.port === 'number')!.port as number;
});
afterAll(() => coordinator.child.kill('SIGKILL'));

const join = (extra: Record<string, unknown> = {}) =>
  pack({ type: 'join', version: PROTOCOL_VERSION, peerPort: 9, hostname: 'test', pid: 1, token: TOKEN, ...extra });

/** Send one message as a fresh client; resolve with the close code and reason the coordinator gave, or
 *  'admitted' when it kept the connection open (the message was a valid join); we then leave again. */
function sendOnce(data: Buffer | string, binary = true): Promise<{ code: number; reason: string } | 'admitted'> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`);
    let timer: NodeJS.Timeout | undefined;
    ws.on('open', () => {
      ws.send(data, { binary });
      timer = setTimeout(() => {
        ws.removeAllListeners('close');
        resolve('admitted');
        ws.terminate();
      }, 200);
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString() });
    });
    ws.on('error', reject);
  });
}

describe(`joining a run (seed ${random.seed})`, () => {
  it('refuses a rank without the token, or with a wrong one', async () => {
    expect(await sendOnce(join({ token: undefined }))).toEqual({ code: 1008, reason: 'refused: missing or wrong join token' });
    expect(await sendOnce(join({ token: 'correct horse battery stapler' }))).toEqual({ code: 1008, reason: 'refused: missing or wrong join token' });
    const r = await runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`, '--connect-timeout', '2'], 20_000, { ZEROWIRE_TOKEN: 'wrong' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused: missing or wrong join token/);
  });

  it('refuses another protocol version and another model, naming the difference', async () => {
    expect(await sendOnce(join({ version: PROTOCOL_VERSION + 1 }))).toMatchObject({ code: 1008, reason: expect.stringMatching(/protocol version 4 is not 3/) });
    const r = await runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`, '--model', '16,64,4', '--connect-timeout', '2'], 20_000, {
      ZEROWIRE_TOKEN: TOKEN,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused: this rank expects model 16,64,4, the run trains 16,32,4/);
  });

  it('refuses the same process joining twice', async () => {
    const first = new WebSocket(`ws://127.0.0.1:${port}`);
    await new Promise((r) => first.once('open', r));
    first.send(join({ pid: 777 }));
    await new Promise((r) => setTimeout(r, 200));
    expect(first.readyState).toBe(WebSocket.OPEN); // admitted
    expect(await sendOnce(join({ pid: 777 }))).toEqual({ code: 1008, reason: 'refused: this process (test pid 777) has already joined' });
    first.close();
    await new Promise((r) => first.once('close', r));
  });

  it('thousands of random and mutated messages: each refused with a reason, the coordinator keeps serving', async () => {
    const valid = join();
    const reasons = new Set<string>();
    let admitted = 0;
    for (let i = 0; i < 1200; i++) {
      let msg: Buffer;
      if (i % 3 === 0) msg = randomBytes(1 + (i % 200));
      else {
        msg = Buffer.from(valid);
        for (let k = 0; k < 1 + (i % 4); k++) msg[random.int(msg.length)] = random.int(256);
      }
      const r = await sendOnce(msg);
      // A mutation of a host name or a port byte can leave a valid join with the right token: that is a
      // legitimate rank and is admitted (and forgotten when it leaves before the run starts).
      if (r === 'admitted') {
        admitted++;
        continue;
      }
      expect(r.code, `message ${i}`).toBe(1008);
      reasons.add(r.reason.replace(/\d+/g, 'N').slice(0, 40));
    }
    expect(admitted).toBeLessThan(200);
    expect(await sendOnce('{"type":"join"}', false)).toEqual({ code: 1008, reason: 'malformed message: text message' });
    // Not even WebSocket: raw bytes on the port (HTTP may wait for the rest of a request: we leave after 1 s).
    await new Promise<void>((resolve) => {
      const s = connect(port, '127.0.0.1', () => s.write(randomBytes(300)));
      const t = setTimeout(() => s.destroy(), 1000);
      s.on('close', () => (clearTimeout(t), resolve()));
      s.on('error', () => undefined);
    });
    expect(reasons.size).toBeGreaterThan(3); // distinct, specific reasons, not one catch-all
    expect(coordinator.child.exitCode).toBeNull();
  }, 120_000);

  it('after all that, two real ranks join and the run completes; the token never appears in the log', async () => {
    const env = { ZEROWIRE_TOKEN: TOKEN };
    const ranks = [0, 1].map(() => runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`, '--peer-host', '127.0.0.1', '--model', MODEL], 60_000, env));
    const results = await Promise.all(ranks);
    for (const r of results) expect(r.code).toBe(0);
    const done = await coordinator.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/losses agree across schemes: yes/);
    expect(stderr + done.stdout).not.toContain(TOKEN);
    expect(results.map((r) => r.stderr).join('')).not.toContain(TOKEN);
  });
});

describe('joining late', () => {
  it('a rank that arrives after the run started is refused', async () => {
    const c = startCli([
      'coordinator',
      '--world',
      '1',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--model',
      '16,32,4',
      '--steps',
      '100000',
      '--batch',
      '8',
      '--samples',
      '32',
      '--scheme',
      'dp',
    ]);
    let err = '';
    c.child.stderr!.on('data', (d) => (err += d));
    try {
      expect(await eventually(() => logLines(err).some((l) => typeof l.port === 'number'), 10_000)).toBe(true);
      const p = logLines(err).find((l) => typeof l.port === 'number')!.port as number;
      const rank = startCli(['rank', '--coordinator', `ws://127.0.0.1:${p}`, '--peer-host', '127.0.0.1']);
      expect(await eventually(() => logLines(err).some((l) => /DP step/.test(String(l.msg))), 20_000)).toBe(true);
      const late = await runCli(['rank', '--coordinator', `ws://127.0.0.1:${p}`, '--connect-timeout', '2'], 20_000);
      expect(late.code).toBe(1);
      expect(late.stderr).toMatch(/refused: the run has already started/);
      rank.child.kill('SIGKILL');
    } finally {
      c.child.kill('SIGKILL');
    }
  });
});
