// One direction-agnostic link between two ranks over a WebSocket: sends chunk frames, routes received
// frames to the collective they belong to, and counts bytes at three levels (payload, envelope, socket).
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import type { Traffic } from './protocol.js';
import { decodeChunkFragments, encodeChunkEnvelope, type ChunkFrame, type ChunkHeader } from './frame.js';
import { closeReason, ProtocolError } from './validate.js';

export type FrameHandler = (f: ChunkFrame) => void;

/** Frames for collectives that have not started yet are held, but only this far ahead. */
const MAX_COLLECTIVES_AHEAD = 8;

export function zeroTraffic(): Traffic {
  return { payload: 0, envelope: 0, frame: 0 };
}

export function addTraffic(a: Traffic, b: Traffic): Traffic {
  return { payload: a.payload + b.payload, envelope: a.envelope + b.envelope, frame: a.frame + b.frame };
}

export class PeerChannel {
  private readonly socket: Socket;
  private readonly sentCounts = zeroTraffic();
  private readonly recvCounts = zeroTraffic();
  private readonly socketAtOpen: { written: number; read: number };
  private readonly pending = new Map<number, ChunkFrame[]>();
  /** Collectives in flight on this link (more than one when ZeRO-3 prefetches), by id. */
  private readonly handlers = new Map<number, FrameHandler>();
  private readonly finished = new Set<number>(); // finished ids at or above the watermark
  private finishedBelow = 0; // every collective below this id has finished
  private failure: Error | null = null;
  private readonly failureListeners = new Set<(err: Error) => void>();
  private lastHeard = Date.now();
  private keepaliveTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ws: WebSocket,
    readonly peerRank: number,
    readonly describe: string,
  ) {
    // ws keeps the net.Socket private; its byte counters are the only honest source for "on the wire".
    this.socket = (ws as unknown as { _socket: Socket })._socket;
    this.socketAtOpen = { written: this.socket.bytesWritten, read: this.socket.bytesRead };
    ws.binaryType = 'fragments'; // see decodeChunkFragments: no copy to join envelope and payload
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer[], isBinary));
    ws.on('pong', () => (this.lastHeard = Date.now()));
    ws.on('ping', () => (this.lastHeard = Date.now()));
    ws.on('close', (code, reason) => this.fail(new Error(`${describe}: connection closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`)));
    ws.on('error', (err) => this.fail(new Error(`${describe}: ${err.message}`)));
  }

  /** Send one chunk. `payload` must not be modified until `onWritten` runs (the socket holds a reference). */
  /** Returns the envelope's size in bytes. */
  send(h: ChunkHeader, payload: Uint8Array, onWritten?: () => void): number {
    if (this.failure) throw this.failure;
    const env = encodeChunkEnvelope(h, payload.byteLength);
    // Two WebSocket fragments of one message: the envelope, then the payload itself, never copied together.
    this.ws.send(env, { binary: true, fin: false });
    this.ws.send(payload, { binary: true, fin: true }, onWritten ? () => onWritten() : undefined);
    this.sentCounts.payload += payload.byteLength;
    this.sentCounts.envelope += env.byteLength;
    return env.byteLength;
  }

  /** Route frames of collective `coll` to `fn` (including any that arrived early). Returns the unsubscribe,
   *  which also marks the collective finished: later frames for it are a protocol error. */
  listen(coll: number, fn: FrameHandler): () => void {
    if (this.failure) throw this.failure;
    this.handlers.set(coll, fn);
    const early = this.pending.get(coll);
    this.pending.delete(coll);
    if (early) for (const f of early) fn(f);
    return () => {
      this.handlers.delete(coll);
      this.finished.add(coll);
      while (this.finished.delete(this.finishedBelow)) this.finishedBelow++;
    };
  }

  /** Ping the peer every `intervalMs`; fail the link when it has been silent for `timeoutMs`. A cut cable
   *  or a frozen host sends no FIN, and without this a collective would wait for its full timeout. */
  keepalive(intervalMs: number, timeoutMs: number): void {
    this.lastHeard = Date.now();
    this.keepaliveTimer = setInterval(() => {
      const silent = Date.now() - this.lastHeard;
      if (silent > timeoutMs) {
        this.abort(new Error(`${this.describe}: peer silent for ${silent} ms (heartbeat timeout ${timeoutMs} ms)`));
        this.ws.terminate();
      } else if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
    }, intervalMs);
  }

  onFailure(fn: (err: Error) => void): () => void {
    this.failureListeners.add(fn);
    return () => this.failureListeners.delete(fn);
  }

  get failed(): Error | null {
    return this.failure;
  }

  sent(): Traffic {
    return { ...this.sentCounts, frame: this.socket.bytesWritten - this.socketAtOpen.written };
  }

  received(): Traffic {
    return { ...this.recvCounts, frame: this.socket.bytesRead - this.socketAtOpen.read };
  }

  /** This end's IP address (which interface the link leaves through). */
  get localAddress(): string | null {
    return this.socket.localAddress ?? null;
  }

  /** Raw TCP socket counters, handshake included. */
  socketBytes(): { written: number; read: number } {
    return { written: this.socket.bytesWritten, read: this.socket.bytesRead };
  }

  close(): void {
    this.fail(new Error(`${this.describe}: closed locally`));
    this.ws.close(1000, 'done');
  }

  /** Close the connection with a reason and fail every waiting collective. */
  abort(err: Error): void {
    this.fail(err);
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1008, closeReason(err.message));
  }

  private onMessage(data: Buffer[], isBinary: boolean): void {
    if (this.failure) return;
    this.lastHeard = Date.now();
    try {
      if (!isBinary) throw new ProtocolError('text message on a data connection');
      const f = decodeChunkFragments(data);
      this.recvCounts.payload += f.payload.byteLength;
      this.recvCounts.envelope += data.reduce((t, b) => t + b.byteLength, 0) - f.payload.byteLength;
      const handler = this.handlers.get(f.coll);
      if (handler) return handler(f);
      if (f.coll < this.finishedBelow || this.finished.has(f.coll)) throw new ProtocolError(`frame for collective ${f.coll}, which has already finished`);
      if (f.coll > this.finishedBelow + MAX_COLLECTIVES_AHEAD) throw new ProtocolError(`frame for collective ${f.coll}, too far ahead of ${this.finishedBelow}`);
      const q = this.pending.get(f.coll) ?? [];
      q.push(f);
      this.pending.set(f.coll, q);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      this.abort(new Error(`${this.describe}: ${e.message}`));
    }
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    this.handlers.clear();
    this.pending.clear();
    for (const fn of this.failureListeners) fn(err);
    this.failureListeners.clear();
  }
}
