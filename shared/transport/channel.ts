// One link between two ranks: sends chunk frames, routes received frames to the collective they belong to
// (asking it first where the payload should land), and counts bytes at three levels (payload, envelope,
// socket). The transport underneath is ws on the listening end and our RingClient on the dialling end.
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { cipherOf, type LinkCipher } from './link-tls.js';
import type WebSocket from 'ws';
import { BufferPool } from './buffer-pool.js';
import { bytesPerElement } from '../tensor/dtype.js';
import { decodeChunkFragments, encodeChunkEnvelope, type ChunkFrame, type ChunkHeader } from './frame.js';
import type { LinkEvents, RingClient } from './ring-client.js';
import { ProtocolError } from '../control/schema.js';
import { closeReason } from './close-reason.js';
import { Liveness, type LivenessTiming } from './liveness.js';
import { socketOf } from './ws-internals.js';
import { WireLog } from './wire-log.js';
import { receiveQueue } from './kernel-queue.js';

/** What a collective listening on a link provides. */
export interface FrameHandler {
  /** Where the payload of this frame should be read to (exactly its byte length), or null for a fresh
   *  buffer. Only the dialling end reads in place; frames may also arrive in a buffer of their own. */
  destination?(h: ChunkHeader): Uint8Array | null;
  frame(f: ChunkFrame): void;
}

/** The two ends of a link differ only in this. */
export interface LinkTransport {
  readonly socket: Socket;
  readonly isOpen: boolean;
  attach(events: LinkEvents): void;
  /** Envelope and payload as one message; the payload must stay untouched until `onWritten`. Only the
   *  listening end sends data (rank r to r+1); the dialling end has none. */
  sendData?(envelope: Buffer, payload: Uint8Array, onWritten?: () => void): void;
  ping(): void;
  close(code: number, reason: string): void;
  terminate(): void;
}

/** The listening end: a ws WebSocket. Sends unmasked; receives whole messages (ws copies them). */
export class WsTransport implements LinkTransport {
  readonly socket: Socket;
  constructor(readonly ws: WebSocket) {
    const socket = socketOf(ws);
    if (!socket) throw new Error('a ring link without a socket');
    this.socket = socket;
  }
  get isOpen(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }
  attach(events: LinkEvents): void {
    this.ws.binaryType = 'fragments'; // see decodeChunkFragments: no copy to join envelope and payload
    this.ws.on('message', (data, isBinary) => {
      events.heard();
      try {
        if (!isBinary) throw new ProtocolError('text message on a data connection');
        events.frame(decodeChunkFragments(data as Buffer[]));
      } catch (err) {
        events.failed(err as Error);
      }
    });
    this.ws.on('pong', () => events.heard());
    this.ws.on('ping', () => events.heard());
    this.ws.on('close', (code, reason) => events.closed(code, reason.toString()));
    this.ws.on('error', (err) => events.failed(err));
  }
  sendData(envelope: Buffer, payload: Uint8Array, onWritten?: () => void): void {
    // Two WebSocket fragments of one message: the envelope, then the payload itself, never copied together;
    // corked so that both frames leave in one writev.
    this.socket.cork();
    this.ws.send(envelope, { binary: true, fin: false });
    this.ws.send(payload, { binary: true, fin: true }, onWritten ? () => onWritten() : undefined);
    this.socket.uncork();
  }
  ping(): void {
    this.ws.ping();
  }
  close(code: number, reason: string): void {
    if (this.isOpen) this.ws.close(code, reason);
  }
  terminate(): void {
    this.ws.terminate();
  }
}

/** The dialling end: our RingClient, which reads payloads in place and sends only its hello and control frames. */
export class ClientTransport implements LinkTransport {
  constructor(readonly client: RingClient) {}
  get socket(): Socket {
    return this.client.socket;
  }
  get isOpen(): boolean {
    return this.client.isOpen;
  }
  attach(events: LinkEvents): void {
    this.client.attach(events);
  }
  ping(): void {
    this.client.ping();
  }
  close(code: number, reason: string): void {
    this.client.close(code, reason);
  }
  terminate(): void {
    this.client.terminate();
  }
}

/** A ring link failed, and which peer it led to: a rank that stops because of it can say whom it lost. */
export class LinkError extends Error {
  override name = 'LinkError';
  constructor(
    message: string,
    readonly peerRank: number,
  ) {
    super(message);
  }
}

/** Frames for collectives that have not started yet are held, but only this far ahead (unless the ring's
 *  collectives allow more: allowAhead). */
const MAX_COLLECTIVES_AHEAD = 8;
/** Receive buffers a link keeps in its arena (virtual memory: pages are touched only as used). */
const POOL_RETAINED_BYTES = 64 << 20;

export class PeerChannel {
  private readonly socket: Socket;
  private readonly socketAtOpen: { written: number; read: number };
  private readonly pending = new Map<number, ChunkFrame[]>();
  /** Collectives in flight on this link (more than one when ZeRO-3 prefetches), by id. */
  private readonly handlers = new Map<number, FrameHandler>();
  private readonly finished = new Set<number>(); // finished ids at or above the watermark
  private finishedBelow = 0; // every collective below this id has finished
  private ahead = MAX_COLLECTIVES_AHEAD;
  private failure: Error | null = null;
  private readonly failureListeners = new Set<(err: Error) => void>();
  private liveness: Liveness | null = null;
  /** Buffers that received payloads are read into when no collective has chosen a place for them yet
   *  (reduce-scatter draws from it too). Whoever ends up holding such a payload gives it back. */
  readonly pool = new BufferPool(POOL_RETAINED_BYTES);
  /** When received data frames were arriving (the step reads which of it overlapped compute). */
  readonly wire = new WireLog();
  /** Bytes waiting in the kernel's receive queue, where it can be asked (kernel-queue.ts). */
  readonly receiveQueue: (() => number) | null;
  /** Mbit/s of payload the pre-flight measured into this end, once it has: the pace at which bytes seen only
   *  in the kernel's queue are taken to have arrived. */
  arrivalMbit: number | null = null;

  constructor(
    readonly transport: LinkTransport,
    readonly peerRank: number,
    readonly describe: string,
  ) {
    this.socket = transport.socket;
    this.socketAtOpen = { written: this.socket.bytesWritten, read: this.socket.bytesRead };
    this.receiveQueue = receiveQueue(this.socket);
    transport.attach({
      destination: (h) => this.guard(() => this.destination(h)) ?? null,
      frame: (f) => this.guard(() => this.onFrame(f)),
      heard: () => this.liveness?.heard(),
      closed: (code, reason) => this.fail(new LinkError(`${describe}: connection closed (${code}${reason.length ? ` ${reason}` : ''})`, peerRank)),
      failed: (err) => this.abort(new LinkError(`${describe}: ${err.message}`, peerRank)),
    });
  }

  /** Send one chunk. `payload` must not be modified until `onWritten` runs (the socket holds a reference).
   *  Returns the envelope's size in bytes. */
  send(h: ChunkHeader, payload: Uint8Array, onWritten?: () => void): number {
    if (this.failure) throw this.failure;
    const env = encodeChunkEnvelope(h, payload.byteLength);
    if (!this.transport.sendData) throw new Error(`${this.describe}: this end of the link only receives`);
    this.transport.sendData(env, payload, onWritten);
    return env.byteLength;
  }

  /** Route frames of collective `coll` to `handler` (including any that arrived early). Returns the
   *  unsubscribe, which also marks the collective finished: later frames for it are a protocol error. */
  listen(coll: number, handler: FrameHandler): () => void {
    if (this.failure) throw this.failure;
    this.handlers.set(coll, handler);
    const early = this.pending.get(coll);
    this.pending.delete(coll);
    if (early) for (const f of early) handler.frame(f);
    return () => {
      this.handlers.delete(coll);
      this.finished.add(coll);
      while (this.finished.delete(this.finishedBelow)) this.finishedBelow++;
    };
  }

  /** Ping the peer and watch for its silence (liveness.ts); a silent peer fails the link. A cut cable or a
   *  frozen host sends no FIN, and without this a collective would wait for its full timeout. */
  keepalive(timing: LivenessTiming): void {
    this.liveness?.stop();
    this.liveness = new Liveness(timing, {
      socket: () => this.socket,
      ping: () => this.transport.isOpen && this.transport.ping(),
      lost: (silent, limit) => {
        this.abort(new LinkError(`${this.describe}: peer silent for ${silent} ms (limit ${limit} ms)`, this.peerRank));
        this.transport.terminate();
      },
    }).start();
  }

  /** Hold frames for collectives up to `n` ahead of the oldest unfinished one (at least the default 8). */
  allowAhead(n: number): void {
    this.ahead = Math.max(MAX_COLLECTIVES_AHEAD, n);
  }

  onFailure(fn: (err: Error) => void): () => void {
    this.failureListeners.add(fn);
    return () => this.failureListeners.delete(fn);
  }

  get failed(): Error | null {
    return this.failure;
  }

  /** Bytes the socket has written since the link opened: WebSocket headers, envelopes, payloads, pings. */
  socketSent(): number {
    return this.socket.bytesWritten - this.socketAtOpen.written;
  }

  /** Bytes the socket has read since the link opened. */
  socketReceived(): number {
    return this.socket.bytesRead - this.socketAtOpen.read;
  }

  /** This end's IP address (which interface the link leaves through). */
  get localAddress(): string | null {
    return this.socket.localAddress ?? null;
  }

  /** What the link encrypts with, or null on a plain link. */
  get cipher(): LinkCipher | null {
    return this.socket instanceof TLSSocket ? cipherOf(this.socket) : null;
  }

  /** Raw TCP socket counters, handshake included. */
  socketBytes(): { written: number; read: number } {
    return { written: this.socket.bytesWritten, read: this.socket.bytesRead };
  }

  close(): void {
    this.fail(new Error(`${this.describe}: closed locally`));
    this.transport.close(1000, 'done');
  }

  /** Close the connection with a reason and fail every waiting collective. */
  abort(err: Error): void {
    this.fail(err);
    this.transport.close(1008, closeReason(err.message));
  }

  /** Run `fn`; a violation by the peer aborts the link instead of escaping into the transport. */
  private guard<T>(fn: () => T): T | undefined {
    if (this.failure) return undefined;
    try {
      return fn();
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      this.abort(new LinkError(`${this.describe}: ${e.message}`, this.peerRank));
      return undefined;
    }
  }

  /** Where a frame's payload should land: its collective decides; early frames get a buffer of their own. */
  private destination(h: ChunkHeader): Uint8Array | null {
    const handler = this.handlers.get(h.coll);
    if (handler) return handler.destination?.(h) ?? null;
    this.checkNotStale(h.coll);
    return this.pool.take(h.elements * bytesPerElement(h.dtype));
  }

  private onFrame(f: ChunkFrame): void {
    const now = performance.now();
    this.wire.add(f.firstByteMs ?? now, now, f.payload.byteLength);
    const handler = this.handlers.get(f.coll);
    if (handler) return handler.frame(f);
    this.checkNotStale(f.coll);
    const q = this.pending.get(f.coll) ?? [];
    q.push(f);
    this.pending.set(f.coll, q);
  }

  private checkNotStale(coll: number): void {
    if (coll < this.finishedBelow || this.finished.has(coll)) throw new ProtocolError(`frame for collective ${coll}, which has already finished`);
    if (coll > this.finishedBelow + this.ahead) throw new ProtocolError(`frame for collective ${coll}, too far ahead of ${this.finishedBelow}`);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.liveness?.stop();
    this.handlers.clear();
    this.pending.clear();
    for (const fn of this.failureListeners) fn(err);
    this.failureListeners.clear();
  }
}
