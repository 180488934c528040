// Plain TCP between two ranks, for the pre-flight's ceiling (link-probe.ts): the same listening port and the
// same proof as a ring link, but after an HTTP upgrade to `zerowire-plain` the socket carries raw bytes, no
// WebSocket framing and no msgpack envelope. What a link moves this way, beside what zerowire's transport
// moves on it, says whether a figure measured the network or zerowire itself. Under --tls-* it is TLS
// (the socket is the link's own), so it still names what the transport adds on top.
import { connect, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import { helloProof, validProof } from './auth.js';
import { tlsFailure, type LinkTls } from './link-tls.js';

interface Address {
  host: string;
  port: number;
}

export const PLAIN_UPGRADE = 'zerowire-plain';

/** Who a plain connection says it is, from its upgrade request's headers. */
interface PlainHello {
  rank: number;
  runId: string;
  link: string;
  proof: Buffer;
}

function plainHelloOf(req: IncomingMessage): PlainHello | null {
  const h = req.headers;
  const rank = Number(h['x-zerowire-rank']);
  const runId = String(h['x-zerowire-run'] ?? '');
  const link = String(h['x-zerowire-link'] ?? '');
  const proof = String(h['x-zerowire-proof'] ?? '');
  if (!Number.isInteger(rank) || rank < 0 || !runId || !link || !/^[0-9a-f]{64}$/.test(proof)) return null;
  return { rank, runId, link, proof: Buffer.from(proof, 'hex') };
}

const plainProofValid = (hello: PlainHello, runId: string, ringKey: Uint8Array): boolean =>
  hello.runId === runId && validProof(ringKey, runId, hello.rank, hello.proof);

/** The listening end's plain connections: those awaited, and those that arrived before they were (the prober
 *  dials as soon as it is done with the phase before; the sender may not have asked yet). */
export class PlainDesk {
  private readonly waiting = new Map<string, { runId: string; ringKey: Uint8Array; resolve: (s: Socket) => void }>();
  private readonly early = new Map<string, { socket: Socket; hello: PlainHello }>();

  constructor(private readonly proved: (s: Socket) => void) {}

  expect(rank: number, auth: { runId: string; ringKey: Uint8Array }, timeoutMs: number, link: string, port: number): Promise<Socket> {
    const key = `${link}:${rank}`;
    const early = this.early.get(key);
    if (early) {
      this.early.delete(key);
      if (plainProofValid(early.hello, auth.runId, auth.ringKey)) return Promise.resolve(this.admit(early.socket));
      early.socket.destroy();
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(key);
        reject(new Error(`rank ${rank} did not open its plain TCP probe (${link}) to this rank's peer port ${port} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(key, { ...auth, resolve: (s) => (clearTimeout(timer), resolve(s)) });
    });
  }

  /** An upgrade to PLAIN_UPGRADE: admitted if awaited and proved, held if early (16 at most), else cut. */
  arrived(req: IncomingMessage, socket: Socket): void {
    const hello = plainHelloOf(req);
    if (!hello) return void socket.destroy();
    const key = `${hello.link}:${hello.rank}`;
    const w = this.waiting.get(key);
    if (!w) {
      if (this.early.size >= 16 || this.early.has(key)) return void socket.destroy();
      this.early.set(key, { socket, hello });
      socket.once('close', () => this.early.get(key)?.socket === socket && this.early.delete(key));
      return;
    }
    if (!plainProofValid(hello, w.runId, w.ringKey)) return void socket.destroy();
    this.waiting.delete(key);
    w.resolve(this.admit(socket));
  }

  close(): void {
    for (const e of this.early.values()) e.socket.destroy();
    this.early.clear();
  }

  /** The listening end's answer: the socket is ours from here on. */
  private admit(socket: Socket): Socket {
    this.proved(socket);
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${PLAIN_UPGRADE}\r\nConnection: Upgrade\r\n\r\n`);
    return socket;
  }
}

/** A dialled plain connection: its socket, and a callback for each read once the answer is through. */
export interface PlainLink {
  socket: Socket;
  onData: ((bytes: number) => void) | null;
}

/** Read size: what one read of the kernel's socket buffer may bring, into the same memory every time. */
const READ_BYTES = 256 << 10;

/** Dial `addr` for a plain connection named `link`; resolves once the listener has accepted it. Reads land in
 *  one buffer, reused (Node's onread): no allocation per read, as iperf's recv into one buffer, so the
 *  ceiling is TCP's and this process's, not the garbage collector's. */
export function dialPlain(
  addr: Address,
  self: number,
  auth: { runId: string; ringKey: Uint8Array },
  link: string,
  timeoutMs: number,
  tls?: LinkTls,
): Promise<PlainLink> {
  const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  const request = [
    'GET / HTTP/1.1',
    `Host: ${host}:${addr.port}`,
    'Connection: Upgrade',
    `Upgrade: ${PLAIN_UPGRADE}`,
    `X-Zerowire-Rank: ${self}`,
    `X-Zerowire-Run: ${auth.runId}`,
    `X-Zerowire-Link: ${link}`,
    `X-Zerowire-Proof: ${helloProof(auth.ringKey, auth.runId, self).toString('hex')}`,
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    let head = '';
    let plain: PlainLink | null = null;
    const buffer = Buffer.alloc(READ_BYTES);
    const onread = {
      buffer,
      callback: (n: number): boolean => {
        if (plain) plain.onData?.(n);
        else answered(buffer.toString('latin1', 0, n));
        return true;
      },
    };
    const socket = tls
      ? connectTls({ host: addr.host, port: addr.port, ca: tls.ca, checkServerIdentity: () => undefined, onread } as ConnectionOptions)
      : connect({ host: addr.host, port: addr.port, onread });
    socket.setNoDelay(true);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`plain TCP to ${host}:${addr.port}: ${err.message}`, { cause: err }));
    };
    const timer = setTimeout(() => fail(new Error(`not accepted within ${timeoutMs} ms`)), timeoutMs);
    /** The listener's answer, read until its blank line: accepted, or refused. */
    const answered = (text: string) => {
      head += text;
      if (head.indexOf('\r\n\r\n') < 0) return void (head.length > 4096 && fail(new Error('an answer that is not HTTP')));
      if (!/^HTTP\/1\.1 101 /.test(head)) return fail(new Error(`refused: ${head.split('\r\n')[0]}`));
      clearTimeout(timer);
      plain = { socket, onData: null };
      resolve(plain);
    };
    socket.once(tls ? 'secureConnect' : 'connect', () => socket.write(request));
    // Once accepted, the receiver ends the connection itself (destroy): its errors then say nothing.
    socket.on('error', (err) => !plain && fail(new Error(tlsFailure(err), { cause: err })));
  });
}

/** Write `frameBytes` at a time on every socket as fast as each takes them, until the receiver closes it. */
export function blastPlain(sockets: Socket[], frameBytes: number): Promise<void> {
  const payload = Buffer.alloc(frameBytes);
  return Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          const pump = () => {
            while (!s.destroyed && s.writable && s.write(payload));
          };
          s.on('drain', pump);
          s.on('error', () => s.destroy());
          s.once('close', () => resolve());
          pump();
        }),
    ),
  ).then(() => undefined);
}
