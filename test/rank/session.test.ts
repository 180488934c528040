// A rank's session driven directly, in this process: a real WebSocket server plays the coordinator and
// sends exactly the messages a coordinator would, and the test reads what the rank answers.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { RankSession } from '../../rank/session.js';
import { decodeControl, encodeMessage, PROTOCOL_VERSION, type ControlMessage } from '../../shared/control/messages.js';
import { smallConfig } from '../helpers/config.js';

const config = smallConfig({ scheme: 'dp,zero3', model: '4,8,3', steps: 2, batch: 4, samples: 16 });
const silent = pino({ level: 'silent' });

/** A coordinator that accepts one rank and hands its messages to the test. */
async function fakeCoordinator(): Promise<{
  url: string;
  rank: Promise<{ ws: WebSocket; inbox: ControlMessage[]; next: (t: ControlMessage['type']) => Promise<ControlMessage> }>;
  close: () => Promise<void>;
}> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => server.once('listening', r));
  const rank = new Promise<{ ws: WebSocket; inbox: ControlMessage[]; next: (t: ControlMessage['type']) => Promise<ControlMessage> }>((resolve) =>
    server.once('connection', (ws) => {
      const inbox: ControlMessage[] = [];
      ws.on('message', (d) => {
        const m = decodeControl(d as Buffer);
        // Clock requests are answered at once, as a coordinator does.
        if (m.type === 'clock') ws.send(encodeMessage({ type: 'clock', t0: m.t0, t1: performance.timeOrigin + performance.now() }));
        else inbox.push(m);
      });
      const next = async (type: ControlMessage['type']) => {
        for (let i = 0; i < 500; i++) {
          const at = inbox.findIndex((m) => m.type === type);
          if (at >= 0) return inbox.splice(at, 1)[0];
          await new Promise((r) => setTimeout(r, 10));
        }
        throw new Error(`the rank sent no ${type} (got ${inbox.map((m) => m.type).join(', ')})`);
      };
      resolve({ ws, inbox, next });
    }),
  );
  const port = (server.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    rank,
    close: () => {
      for (const c of server.clients) c.terminate();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function session(url: string): RankSession {
  const s = new RankSession({ coordinator: url, peerHost: '127.0.0.1', peerPort: 0, connectTimeoutMs: 5000, heartbeatTimeoutMs: 60_000 }, silent);
  cleanup.push(() => s.close());
  return s;
}

describe('a rank session, message by message', () => {
  it('join -> assign -> ready -> run (steps, done) for each scheme -> finish ends the session', async () => {
    const coord = await fakeCoordinator();
    cleanup.push(coord.close);
    const s = session(coord.url);
    const done = s.run();
    const rank = await coord.rank;
    const j = await rank.next('join');
    expect(j).toMatchObject({ type: 'join', version: PROTOCOL_VERSION, pid: process.pid });
    rank.ws.send(
      encodeMessage({ type: 'assign', rank: 0, world: 1, runId: 'r1', ringKey: new Uint8Array(32), prevHost: '127.0.0.1', prevPort: 1, hostRanks: 1, config }),
    );
    expect(await rank.next('ready')).toEqual({ type: 'ready', rank: 0 });
    for (const scheme of config.schemes) {
      rank.ws.send(encodeMessage({ type: 'run', scheme }));
      const steps = [await rank.next('step'), await rank.next('step')];
      expect(steps.map((m) => m.type === 'step' && [m.scheme, m.metrics.step])).toEqual([
        [scheme, 0],
        [scheme, 1],
      ]);
      const w = await rank.next('weights'); // its final weights before its summary: one piece at this size
      const total = w.type === 'weights' ? w.total : -1;
      expect(w.type === 'weights' && [w.scheme, w.offset, w.bytes.byteLength]).toEqual([scheme, 0, total]);
      const d = await rank.next('done');
      expect(d.type === 'done' && [d.summary.scheme, d.summary.rank, d.summary.steps.length, d.summary.weightBytes]).toEqual([scheme, 0, 2, total]);
    }
    rank.ws.send(encodeMessage({ type: 'finish' }));
    await expect(done).resolves.toBeUndefined();
  });

  it('an abort from the coordinator ends the session with its reason', async () => {
    const coord = await fakeCoordinator();
    cleanup.push(coord.close);
    const done = session(coord.url).run();
    const rank = await coord.rank;
    await rank.next('join');
    rank.ws.send(encodeMessage({ type: 'abort', reason: 'rank 3 fell over' }));
    await expect(done).rejects.toThrow('run aborted by the coordinator: rank 3 fell over');
  });

  it('a run before any assign, and a malformed message, are refused with the reason sent back', async () => {
    const coord = await fakeCoordinator();
    cleanup.push(coord.close);
    const done = session(coord.url).run();
    const rank = await coord.rank;
    await rank.next('join');
    rank.ws.send(encodeMessage({ type: 'run', scheme: 'dp' }));
    await expect(done).rejects.toThrow('told to run dp before being assigned a rank');
    const abort = await rank.next('abort');
    expect(abort.type === 'abort' && abort.reason).toMatch(/told to run dp before being assigned a rank/);
  });
});
