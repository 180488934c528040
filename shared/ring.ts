// Wiring ranks into a ring. Rank r listens; rank r+1 dials it. Bulk data flows r -> r+1 over the
// connection r accepted, i.e. server-to-client, where RFC 6455 frames are not masked (no per-byte XOR).
import { WebSocket, WebSocketServer } from 'ws';
import { PeerChannel } from './channel.js';
import { ENVELOPE_BYTES } from './frame.js';
import { decodeMsgpack, encodeMessage, MAX_CHUNK_BYTES, validateHello } from './protocol.js';

export const MAX_PEER_MESSAGE = MAX_CHUNK_BYTES + ENVELOPE_BYTES;

export interface PeerAddress {
  host: string;
  port: number;
}

const WS_OPTIONS = { perMessageDeflate: false, maxPayload: MAX_PEER_MESSAGE } as const;

/** A rank's listening socket: its next neighbour dials in here, and this rank sends to it over that link. */
export class PeerListener {
  private readonly waiting = new Map<number, { runId: string; resolve: (c: PeerChannel) => void; reject: (e: Error) => void }>();
  private readonly early = new Map<number, { ws: WebSocket; runId: string }>();

  private constructor(private readonly server: WebSocketServer) {
    server.on('connection', (ws, req) => this.onConnection(ws, `${req.socket.remoteAddress}:${req.socket.remotePort}`));
  }

  static open(port = 0, host = '0.0.0.0'): Promise<PeerListener> {
    return new Promise((resolve, reject) => {
      const server = new WebSocketServer({ port, host, ...WS_OPTIONS });
      server.once('listening', () => resolve(new PeerListener(server)));
      server.once('error', (err) => reject(new Error(`cannot listen for peers on ${host}:${port}: ${err.message}`)));
    });
  }

  get port(): number {
    const a = this.server.address();
    if (typeof a === 'string' || a === null) throw new Error('peer listener has no TCP address');
    return a.port;
  }

  /** Resolve with the channel to `rank` once it has connected and said hello for this run. */
  expect(rank: number, runId: string, timeoutMs: number): Promise<PeerChannel> {
    const early = this.early.get(rank);
    if (early) {
      this.early.delete(rank);
      if (early.runId !== runId) {
        early.ws.close(1008, 'wrong run');
        return Promise.reject(new Error(`peer rank ${rank} connected for another run`));
      }
      return Promise.resolve(new PeerChannel(early.ws, rank, `link from rank ${rank}`));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(rank);
        reject(new Error(`rank ${rank} did not connect to this rank's peer port ${this.port} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(rank, {
        runId,
        resolve: (c) => (clearTimeout(timer), resolve(c)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  }

  close(): Promise<void> {
    for (const w of this.waiting.values()) w.reject(new Error('peer listener closed'));
    this.waiting.clear();
    for (const c of this.server.clients) c.terminate();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(ws: WebSocket, from: string): void {
    const timer = setTimeout(() => ws.close(1008, 'no hello'), 10_000);
    ws.once('message', (data, isBinary) => {
      clearTimeout(timer);
      try {
        if (!isBinary) throw new Error('text message');
        const hello = validateHello(decodeMsgpack(data as Buffer));
        const w = this.waiting.get(hello.rank);
        if (!w) {
          if (this.early.has(hello.rank)) throw new Error(`rank ${hello.rank} is already connected`);
          this.early.set(hello.rank, { ws, runId: hello.runId });
          return;
        }
        this.waiting.delete(hello.rank);
        if (w.runId !== hello.runId) throw new Error(`rank ${hello.rank} said hello for another run`);
        w.resolve(new PeerChannel(ws, hello.rank, `link to rank ${hello.rank} (${from})`));
      } catch (err) {
        ws.close(1008, `refused: ${(err as Error).message}`.slice(0, 120));
      }
    });
  }
}

/** Open a connection to `addr` and introduce ourselves. */
export function dialPeer(addr: PeerAddress, self: number, peer: number, runId: string, timeoutMs: number): Promise<PeerChannel> {
  const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  const url = `ws://${host}:${addr.port}/`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ...WS_OPTIONS, handshakeTimeout: timeoutMs });
    ws.once('open', () => {
      ws.removeAllListeners('error');
      ws.send(encodeMessage({ type: 'hello', rank: self, runId }));
      resolve(new PeerChannel(ws, peer, `link from rank ${peer} (${url})`));
    });
    ws.once('error', (err) => reject(new Error(`cannot reach rank ${peer} at ${url}: ${err.message}`)));
  });
}

export class Ring {
  constructor(
    readonly rank: number,
    readonly world: number,
    /** We send to rank+1 over this (server side: unmasked). */
    readonly next: PeerChannel | null,
    /** We receive from rank-1 over this. */
    readonly prev: PeerChannel | null,
  ) {}

  close(): void {
    this.next?.close();
    this.prev?.close();
  }
}

export async function wireRing(opts: { rank: number; world: number; runId: string; listener: PeerListener; prev: PeerAddress; timeoutMs: number }): Promise<Ring> {
  const { rank, world, runId, listener } = opts;
  if (world === 1) return new Ring(rank, world, null, null);
  const nextRank = (rank + 1) % world;
  const prevRank = (rank - 1 + world) % world;
  const [next, prev] = await Promise.all([listener.expect(nextRank, runId, opts.timeoutMs), dialPeer(opts.prev, rank, prevRank, runId, opts.timeoutMs)]);
  return new Ring(rank, world, next, prev);
}
