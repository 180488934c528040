// A joined, authenticated rank that sends more than any real message of the run could hold: refused at the
// frame header, the run stopped naming it and the size, and the coordinator's memory does not grow by it.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { decodeControl, encodeMessage, PROTOCOL_VERSION } from '../../shared/control/messages.js';
import { socketOf } from '../../shared/transport/ws-internals.js';
import { eventually, logLines, runCli, startCli } from '../helpers/cli.js';

const SMALL = ['--model', '8,16,4', '--batch', '8', '--samples', '32', '--steps', '3', '--scheme', 'dp'];
const FRAME = 256 << 20;

/** Resident bytes of a live process (VmRSS), or null once it is gone. */
function rss(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

describe('message caps for joined ranks', () => {
  it("a rank's oversized message stops the run with its name and size, and costs the coordinator nothing", async () => {
    const coord = startCli(['coordinator', '--world', '2', '--port', '0', '--host', '127.0.0.1', ...SMALL], { ZEROWIRE_TOKEN: 'secret' });
    let stderr = '';
    coord.child.stderr!.on('data', (d) => (stderr += d));
    try {
      expect(await eventually(() => logLines(stderr).some((l) => typeof l.port === 'number'), 10_000)).toBe(true);
      const port = logLines(stderr).find((l) => typeof l.port === 'number')!.port as number;
      // One real rank, and one that joins properly and then misbehaves. Its ring port takes connections and
      // never answers, so the real rank waits there rather than failing first.
      const mute = createServer(() => undefined).listen(0, '127.0.0.1');
      await new Promise((r) => mute.once('listening', r));
      const peerPort = (mute.address() as { port: number }).port;
      const real = runCli(['rank', '--coordinator', `ws://127.0.0.1:${port}`, '--connect-timeout', '10'], 60_000, { ZEROWIRE_TOKEN: 'secret' });
      const rogue = new WebSocket(`ws://127.0.0.1:${port}`);
      rogue.on('error', () => undefined);
      await new Promise((r) => rogue.once('open', r));
      const assigned = new Promise<void>((resolve) => rogue.on('message', (data) => decodeControl(data as Buffer).type === 'assign' && resolve()));
      rogue.send(encodeMessage({ type: 'join', version: PROTOCOL_VERSION, peerPort, hostname: 'rogue', pid: 4242, token: 'secret' }));
      await assigned;
      const before = rss(coord.child.pid!)!;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss(coord.child.pid!) ?? 0)), 10);
      // The frame written by hand (ws would mask 256 MiB first, freezing this process past any heartbeat):
      // a masked binary frame announcing FRAME bytes, then its bytes, 16 MiB at a time, while the socket takes them.
      const socket = socketOf(rogue)!;
      socket.on('error', () => undefined);
      const header = Buffer.alloc(14);
      header[0] = 0x82;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(FRAME), 2);
      socket.write(header);
      for (let sent = 0; sent < FRAME && !socket.destroyed; sent += 16 << 20) {
        socket.write(Buffer.alloc(16 << 20, 7));
        await new Promise((r) => setTimeout(r, 20));
      }
      const done = await coord.done;
      clearInterval(sampler);
      expect(done.code).toBe(1);
      const err = logLines(stderr).find((l) => l.level === 50);
      expect(String(err?.msg)).toMatch(
        new RegExp(
          `rank \\d \\(rogue, 127\\.0\\.0\\.1, pid 4242\\) sent a message of ${FRAME} bytes, over the limit of \\d+ bytes a rank may send in this run`,
        ),
      );
      expect(peak - before).toBeLessThan(32 << 20);
      mute.close();
      expect((await real).code).not.toBe(0);
      expect(done.stderr + (await real).stderr).not.toMatch(/\n\s+at /);
    } finally {
      coord.child.kill('SIGKILL');
    }
  });
});
