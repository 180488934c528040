// Wiring ranks into a ring. Rank r listens; rank r+1 dials it. Bulk data flows r -> r+1 over the
// connection r accepted, i.e. server-to-client, where RFC 6455 frames are not masked (no per-byte XOR).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { ClientTransport, PeerChannel, WsTransport } from './channel.js';
import { RingClient } from './ring-client.js';
import { ENVELOPE_BYTES } from './frame.js';
import { helloProof, validProof } from './auth.js';
import { closeReason } from './close-reason.js';
import { bindError } from './bind-error.js';
import type { LinkTls } from './link-tls.js';
import { decodeMsgpack, encodeMessage, validateHello, type PeerHello } from '../control/messages.js';
import { PLAIN_UPGRADE, PlainDesk } from './plain-tcp.js';

/** The largest message the dialling end reads in a run of this chunk size: one chunk and its envelope (an
 *  element is at most 4 bytes, so a chunk holds at least one). A peer that announces more is refused at the
 *  frame header, before anything is buffered. */
const peerMessageCap = (chunkBytes: number) => Math.max(chunkBytes, 4) + ENVELOPE_BYTES;

export interface PeerAddress {
  host: string;
  port: number;
}

/** The listening end only ever receives the dialler's hello and control frames (data flows the other way),
 *  so nothing larger is read there, from anyone. */
const MAX_INCOMING_MESSAGE = 4096;
/** A connection must have said a valid hello this soon after connecting, and only so many may wait. */
const HELLO_TIMEOUT_MS = 5000;
const MAX_WAITING = 32;

/** A rank's listening socket: its next neighbour dials in here, and this rank sends to it over that link. */
/** Which ring a link belongs to: the main ring, or a hybrid scheme's sub-ring. */
/** The run's ring, a group's, a cross ring; `group+s` / `cross+s`: the same members s apart (an all-to-all's
 *  stride rings, collectives/all-to-all.ts). */
export type SubRingName = 'group' | 'cross' | `${'group' | 'cross'}+${number}`;
export type RingName = 'main' | SubRingName;
/** What a connection to a listener is for: a ring, or one pre-flight probe connection (link-probe.ts). */
export type LinkName = RingName | `probe:${number}`;
const slot = (ring: LinkName, rank: number) => `${ring}:${rank}`;
const ringOf = (h: PeerHello): LinkName => (h.ring ?? 'main') as LinkName;

export class PeerListener {
  /** By ring and rank: a rank may dial this one for more than one ring. */
  private readonly waiting = new Map<string, { runId: string; ringKey: Uint8Array; resolve: (c: PeerChannel) => void; reject: (e: Error) => void }>();
  /** Connections that said hello before this rank was told its ring key; checked when expect() runs. */
  private readonly early: { ws: WebSocket; hello: PeerHello; from: string }[] = [];
  /** Plain TCP connections (the pre-flight's ceiling): proved, then taken off the unproven list. */
  private readonly plain = new PlainDesk((socket) => this.unproven.delete(socket));

  /** Connections that have not proved they belong to the run: each is cut at its deadline. */
  private readonly unproven = new Set<Socket>();
  /** The ring is wired: nobody else has any business here. */
  private sealed = false;

  private constructor(
    private readonly server: WebSocketServer,
    private readonly http: Server,
    /** Set: this port serves TLS, and this rank dials its peers over TLS too (all of a run's links are alike). */
    readonly tls?: LinkTls,
  ) {
    // With TLS the socket a hello arrives on is the TLS one, so that is the one watched (a handshake that never
    // finishes is cut by the server's own handshake timeout).
    http.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => this.onSocket(socket));
    server.on('connection', (ws, req) => this.onConnection(ws, req.socket, `${req.socket.remoteAddress}:${req.socket.remotePort}`));
    // Upgrades are ours to route: a plain TCP probe here, every other one to the WebSocket server.
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      if (String(req.headers.upgrade ?? '').toLowerCase() === PLAIN_UPGRADE) return this.sealed ? void socket.destroy() : this.plain.arrived(req, socket);
      server.handleUpgrade(req, socket, head, (ws) => server.emit('connection', ws, req));
    });
  }

  static open(port = 0, host = '0.0.0.0', tls?: LinkTls): Promise<PeerListener> {
    return new Promise((resolve, reject) => {
      const http = tls ? createHttpsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: HELLO_TIMEOUT_MS }) : createServer();
      const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_INCOMING_MESSAGE });
      server.on('error', () => undefined); // ws repeats the http server's error, which is handled here:
      http.once('error', (err) => reject(bindError(err, 'the ring port (--peer-port)', host, port)));
      http.listen(port, host, () => resolve(new PeerListener(server, http, tls)));
    });
  }

  /** The ring is wired: hellos still held (strangers', forged) are closed, and later connections refused. */
  seal(): void {
    this.sealed = true;
    for (const e of this.early.splice(0)) e.ws.close(1008, 'refused: the ring is wired');
    for (const socket of this.unproven) socket.destroy();
  }

  get port(): number {
    const a = this.http.address();
    if (typeof a === 'string' || a === null) throw new Error('peer listener has no TCP address');
    return a.port;
  }

  /** Resolve with the channel to `rank` once it has connected and proved it belongs to this run. */
  expect(rank: number, runId: string, ringKey: Uint8Array, timeoutMs: number, ring: LinkName = 'main'): Promise<PeerChannel> {
    const candidates = this.early.filter((e) => e.hello.rank === rank && ringOf(e.hello) === ring);
    const good = candidates.find((e) => e.hello.runId === runId && validProof(ringKey, runId, rank, e.hello.proof));
    for (const e of candidates) {
      this.early.splice(this.early.indexOf(e), 1);
      if (e !== good) e.ws.close(1008, 'refused: not a member of this run');
    }
    if (good) return this.admit(good.ws, good.hello, good.from, runId, ringKey);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(slot(ring, rank));
        reject(
          new Error(`rank ${rank} did not connect to this rank's peer port ${this.port}${ring === 'main' ? '' : ` (${ring} ring)`} within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      this.waiting.set(slot(ring, rank), {
        runId,
        ringKey,
        resolve: (c) => (clearTimeout(timer), resolve(c)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  }

  /** The plain TCP socket `rank` opens for `link` once it has proved it belongs to this run (plain-tcp.ts). */
  expectPlain(rank: number, runId: string, ringKey: Uint8Array, timeoutMs: number, link: string): Promise<Socket> {
    return this.plain.expect(rank, { runId, ringKey }, timeoutMs, link, this.port);
  }

  /** Turn a connection into a channel if its hello proves it, or refuse it with a reason. */
  private admit(ws: WebSocket, hello: PeerHello, from: string, runId: string, ringKey: Uint8Array): Promise<PeerChannel> {
    if (hello.runId !== runId || !validProof(ringKey, runId, hello.rank, hello.proof)) {
      ws.close(1008, 'refused: not a member of this run');
      return Promise.reject(new Error(`a connection from ${from} claiming to be rank ${hello.rank} failed authentication`));
    }
    return Promise.resolve(new PeerChannel(new WsTransport(ws), hello.rank, `link to rank ${hello.rank} (${from})`));
  }

  close(): Promise<void> {
    for (const w of this.waiting.values()) w.reject(new Error('peer listener closed'));
    this.waiting.clear();
    for (const c of this.server.clients) c.terminate();
    for (const socket of this.unproven) socket.destroy();
    this.plain.close();
    return new Promise((resolve) => this.server.close(() => this.http.close(() => resolve())));
  }

  /** Every TCP connection starts unproven, on a deadline, and only so many at once; a sealed ring takes none. */
  private onSocket(socket: Socket): void {
    if (this.sealed || this.unproven.size >= MAX_WAITING) return void socket.destroy();
    this.unproven.add(socket);
    const timer = setTimeout(() => this.unproven.has(socket) && socket.destroy(), HELLO_TIMEOUT_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      this.unproven.delete(socket);
    });
  }

  private onConnection(ws: WebSocket, socket: Socket, from: string): void {
    ws.on('error', () => undefined); // protocol violations close the socket; nothing here may crash the rank
    ws.once('message', (data, isBinary) => {
      try {
        if (!isBinary) throw new Error('text message');
        const hello = validateHello(decodeMsgpack(data as Buffer));
        const key = slot(ringOf(hello), hello.rank);
        const w = this.waiting.get(key);
        if (!w) {
          // This side has not been told its ring key yet: hold the connection until expect() checks it.
          // Off the deadline (this rank may be slow to hear its assignment), but 16 at most, and all of them
          // closed once the ring is wired (seal).
          if (this.early.length >= 16) throw new Error('too many unauthenticated connections');
          this.unproven.delete(socket);
          const entry = { ws, hello, from };
          this.early.push(entry);
          ws.once('close', () => this.early.includes(entry) && this.early.splice(this.early.indexOf(entry), 1));
          return;
        }
        // A stranger claiming the rank we wait for is turned away; the wait goes on for the real one.
        if (hello.runId !== w.runId || !validProof(w.ringKey, w.runId, hello.rank, hello.proof)) throw new Error('not a member of this run');
        this.waiting.delete(key);
        this.unproven.delete(socket);
        this.admit(ws, hello, from, w.runId, w.ringKey).then(w.resolve, w.reject);
      } catch (err) {
        ws.close(1008, closeReason(`refused: ${(err as Error).message}`));
      }
    });
  }
}

/** Open a connection to `addr` and introduce ourselves. This end receives the bulk data, so it is our own
 *  client (ring-client.ts), which reads payloads straight into the collective's buffers. */
export async function dialPeer(
  addr: PeerAddress,
  self: number,
  peer: number,
  auth: { runId: string; ringKey: Uint8Array },
  limits: { chunkBytes: number; timeoutMs: number },
  ring: LinkName = 'main',
  tls?: LinkTls,
): Promise<PeerChannel> {
  const { runId, ringKey } = auth;
  const where = `${tls ? 'wss' : 'ws'}://${addr.host.includes(':') ? `[${addr.host}]` : addr.host}:${addr.port}/`;
  let client: RingClient;
  try {
    client = await RingClient.connect(addr.host, addr.port, peerMessageCap(limits.chunkBytes), limits.timeoutMs, tls);
  } catch (err) {
    throw new Error(`cannot reach rank ${peer} at ${where}: ${(err as Error).message}`, { cause: err });
  }
  const hello: PeerHello = { type: 'hello', rank: self, runId, proof: helloProof(ringKey, runId, self), ...(ring === 'main' ? {} : { ring }) };
  client.sendMessage(encodeMessage(hello));
  return new PeerChannel(new ClientTransport(client), peer, `link from rank ${peer} (${where})`);
}

export class Ring {
  constructor(
    readonly rank: number,
    readonly world: number,
    /** We send to rank+1 over this (server side: unmasked). */
    readonly next: PeerChannel | null,
    /** We receive from rank-1 over this. */
    readonly prev: PeerChannel | null,
    readonly name: RingName = 'main',
  ) {}

  close(): void {
    this.next?.close();
    this.prev?.close();
  }
}

export async function wireRing(opts: {
  rank: number;
  world: number;
  runId: string;
  ringKey: Uint8Array;
  listener: PeerListener;
  prev: PeerAddress;
  timeoutMs: number;
  chunkBytes: number; // the run's chunk size: the largest data frame a peer may send
  keepOpen?: boolean; // more rings are wired through this listener: the caller seals it
}): Promise<Ring> {
  const { rank, world, runId, ringKey, listener } = opts;
  if (world === 1) {
    if (!opts.keepOpen) listener.seal();
    return new Ring(rank, world, null, null);
  }
  const nextRank = (rank + 1) % world;
  const prevRank = (rank - 1 + world) % world;
  const [next, prev] = await Promise.all([
    listener.expect(nextRank, runId, ringKey, opts.timeoutMs),
    dialPeer(opts.prev, rank, prevRank, { runId, ringKey }, opts, 'main', listener.tls),
  ]);
  if (!opts.keepOpen) listener.seal();
  return new Ring(rank, world, next, prev);
}

/**
 * A sub-ring of the run's ranks (a hybrid scheme's shard group, or the ranks holding the same shard in every
 * group): `members` are global rank ids in ring order, this rank among them. Links are named by the ring,
 * so two ranks may share a link in more than one ring. The Ring it returns counts positions within it.
 */
export async function wireSubRing(opts: {
  ring: SubRingName;
  self: number;
  members: readonly number[];
  peers: readonly PeerAddress[]; // by global rank id
  runId: string;
  ringKey: Uint8Array;
  listener: PeerListener;
  timeoutMs: number;
  chunkBytes: number;
}): Promise<Ring> {
  const { ring, self, members, runId, ringKey, listener } = opts;
  const at = members.indexOf(self);
  if (at < 0) throw new Error(`rank ${self} is not in its ${ring} ring (${members.join(', ')})`);
  const size = members.length;
  if (size === 1) return new Ring(0, 1, null, null, ring);
  const nextRank = members[(at + 1) % size];
  const prevRank = members[(at - 1 + size) % size];
  const [next, prev] = await Promise.all([
    listener.expect(nextRank, runId, ringKey, opts.timeoutMs, ring),
    dialPeer(opts.peers[prevRank], self, prevRank, { runId, ringKey }, opts, ring, listener.tls),
  ]);
  return new Ring(at, size, next, prev, ring);
}
