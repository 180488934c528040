// The coordinator's listening socket: a WebSocket server on an HTTP server (HTTPS when a certificate is
// given: wss://), and the limits for connections that have not joined yet: they must upgrade and join
// within seconds, may send only a join-sized message, and only so many may wait at once. Opening it and
// closing it, nothing else.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { bindError } from '../shared/transport/bind-error.js';

export interface ControlServer {
  ws: WebSocketServer;
  http: HttpServer;
  port: number;
  /** Connections that have not joined: each is cut if it has not joined within the join timeout. */
  waiting: Set<Socket>;
}

export interface ControlLimits {
  joinMessageBytes: number; // the largest message a connection may send before it has joined
  joinTimeoutMs: number; // from TCP connect to a valid join
  maxWaiting: number; // connections that have not joined, at once
}

/** Where a control connection comes from, without the IPv4-mapped prefix. */
export function plainAddress(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
}

export function listenControl(
  host: string,
  port: number,
  tls: { cert: Buffer; key: Buffer } | undefined,
  limits: ControlLimits,
  onConnection: (ws: WebSocket, req: IncomingMessage) => void,
  onRefuse: (from: string, why: string) => void,
): Promise<ControlServer> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(bindError(err, "the coordinator's port (--port)", host, port));
    const http = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }) : createHttpServer();
    const ws = new WebSocketServer({ server: http, perMessageDeflate: false, maxPayload: limits.joinMessageBytes });
    ws.on('error', () => undefined); // ws repeats the http server's error, which is handled below
    const waiting = new Set<Socket>();
    // A raw TCP connection counts from its first byte of life: silence, a slow upgrade and a missing join
    // all run into the same deadline; beyond maxWaiting, new ones are cut at once.
    http.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      const from = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
      if (waiting.size >= limits.maxWaiting) {
        onRefuse(from, `${limits.maxWaiting} connections are already waiting to join`);
        return socket.destroy();
      }
      waiting.add(socket);
      const timer = setTimeout(() => {
        if (!waiting.has(socket)) return;
        onRefuse(from, `did not join within ${limits.joinTimeoutMs} ms`);
        socket.destroy();
      }, limits.joinTimeoutMs);
      socket.once('close', () => {
        clearTimeout(timer);
        waiting.delete(socket);
      });
    });
    http.once('error', fail);
    http.listen(port, host, () => {
      ws.on('connection', onConnection);
      resolve({ ws, http, port: (http.address() as { port: number }).port, waiting });
    });
  });
}

/** Give the ranks `graceMs` to close their side cleanly (`ranksOpen`), then cut whatever is left. */
export async function closeControl(s: ControlServer, graceMs: number, ranksOpen: () => boolean): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (ranksOpen() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  for (const c of s.ws.clients) c.terminate();
  for (const socket of s.waiting) socket.destroy();
  await new Promise<void>((r) => s.ws.close(() => r()));
  await new Promise<void>((r) => s.http.close(() => r()));
}
