// The liveness detector on real loopback sockets: bytes count as life, our own stalls do not count as the
// peer's silence, a silent peer is named within its limit, and the limit grows with the gaps it has seen.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Liveness, livenessFor } from '../../../shared/transport/liveness.js';

let server: Server | null = null;
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  server?.close();
  server = null;
});

/** A connected pair on loopback: `near` is watched, `far` plays the peer. */
async function pair(): Promise<{ near: Socket; far: Socket }> {
  server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const accepted = once(server, 'connection');
  const near = connect(port, '127.0.0.1');
  const [far] = (await accepted) as [Socket];
  await once(near, 'connect');
  near.on('data', () => undefined); // read, as ws would
  sockets.push(near, far);
  return { near, far };
}

function watch(
  near: Socket,
  timeoutMs: number,
  ping: () => void = () => undefined,
): { liveness: Liveness; lost: Promise<{ silent: number; limit: number; at: number }> } {
  let report: (v: { silent: number; limit: number; at: number }) => void = () => undefined;
  const lost = new Promise<{ silent: number; limit: number; at: number }>((r) => (report = r));
  const liveness = new Liveness(livenessFor(timeoutMs), {
    socket: () => near,
    ping,
    lost: (silent, limit) => report({ silent, limit, at: performance.now() }),
  });
  return { liveness, lost };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('liveness', () => {
  it('names a silent peer within its limit', async () => {
    const { near } = await pair();
    const { liveness, lost } = watch(near, 300);
    const t0 = performance.now();
    liveness.start();
    const l = await lost;
    expect(l.limit).toBe(300);
    expect(l.at - t0).toBeGreaterThan(300);
    expect(l.at - t0).toBeLessThan(300 + 2 * 75 + 100);
  });

  it('counts bytes arriving as life, with no message or heartbeat', async () => {
    const { near, far } = await pair();
    const { liveness, lost } = watch(near, 300);
    let gone = false;
    void lost.then(() => (gone = true));
    liveness.start();
    for (let i = 0; i < 12; i++) {
      far.write(Buffer.alloc(100));
      await sleep(100);
    }
    expect(gone).toBe(false);
    liveness.stop();
  });

  it('does not blame the peer for our own stall', async () => {
    // The peer is another process that dials in and sends a byte every 50 ms, on while this one is stalled.
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const peer = spawn(
      process.execPath,
      ['-e', `const s = require('net').connect(${port}, '127.0.0.1'); setInterval(() => s.write('.'), 50); setTimeout(() => process.exit(0), 4000)`],
      { stdio: 'ignore' },
    );
    const [near] = (await once(server, 'connection')) as [Socket];
    near.on('data', () => undefined);
    sockets.push(near);
    await once(near, 'data');
    // This event loop blocks for 1.5 s in the check phase after the detector's second look, so the peer's
    // bytes wait in the kernel, unread, and the detector's next look (timers) comes before the poll phase
    // reads them: as after a long compute callback.
    let pings = 0;
    const { liveness, lost } = watch(near, 300, () => ++pings === 2 && setImmediate(() => busy(1500)));
    let gone = false;
    void lost.then(() => (gone = true));
    liveness.start();
    await sleep(2 * livenessFor(300).intervalMs + 1600);
    await sleep(400);
    peer.kill();
    expect(gone).toBe(false);
    liveness.stop();
  });

  it('widens its limit after long gaps, up to its ceiling', async () => {
    const { near, far } = await pair();
    const { liveness, lost } = watch(near, 300);
    liveness.start();
    expect(liveness.limitMs).toBe(300);
    await sleep(200);
    far.write(Buffer.alloc(1));
    await sleep(250);
    far.write(Buffer.alloc(1));
    await sleep(250);
    const grown = liveness.limitMs;
    expect(grown).toBeGreaterThan(300);
    expect(grown).toBeLessThanOrEqual(livenessFor(300).maxTimeoutMs);
    const l = await lost; // then silence: named at the wider limit
    expect(l.limit).toBe(grown);
    expect(l.silent).toBeGreaterThanOrEqual(grown); // silence beyond the limit, reported rounded to the ms
  });
});
