// The coordinator's listening socket: a WebSocket server, on an HTTPS server when a certificate is given
// (wss://). Opening it and closing it, nothing else.
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { WebSocketServer, type WebSocket } from 'ws';

export interface ControlServer {
  ws: WebSocketServer;
  https: HttpsServer | null;
  port: number;
}

/** Where a control connection comes from, without the IPv4-mapped prefix. */
export function plainAddress(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
}

export function listenControl(
  host: string,
  port: number,
  tls: { cert: Buffer; key: Buffer } | undefined,
  onConnection: (ws: WebSocket, req: IncomingMessage) => void,
  maxPayload: number,
): Promise<ControlServer> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`));
    const https = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }) : null;
    const options = { perMessageDeflate: false, maxPayload };
    const ws = https ? new WebSocketServer({ server: https, ...options }) : new WebSocketServer({ host, port, ...options });
    const ready = () => {
      ws.on('connection', onConnection);
      resolve({ ws, https, port: ((https ?? ws).address() as { port: number }).port });
    };
    if (https) {
      https.once('error', fail);
      https.listen(port, host, ready);
    } else {
      ws.once('error', fail);
      ws.once('listening', ready);
    }
  });
}

/** Give the ranks `graceMs` to close their side cleanly (`ranksOpen`), then cut whatever is left. */
export async function closeControl(s: ControlServer, graceMs: number, ranksOpen: () => boolean): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (ranksOpen() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  for (const c of s.ws.clients) c.terminate();
  await new Promise<void>((r) => s.ws.close(() => r()));
  if (s.https) await new Promise<void>((r) => s.https!.close(() => r()));
}
