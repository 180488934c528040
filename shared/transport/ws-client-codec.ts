// The client half of RFC 6455 that the ring's receiving end needs: the opening handshake and masked frames
// for the little it sends (hello, pings, pongs, close). Bulk data never travels client-to-server.
import { createHash, randomBytes } from 'node:crypto';
import { ProtocolError } from '../control/schema.js';

export const OP = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The upgrade request and the Sec-WebSocket-Accept value a correct server must answer with. */
export function upgradeRequest(host: string, port: number): { request: string; accept: string } {
  const key = randomBytes(16).toString('base64');
  const hostHeader = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const request = [
    'GET / HTTP/1.1',
    `Host: ${hostHeader}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${key}`,
    'Sec-WebSocket-Version: 13',
    '',
    '',
  ].join('\r\n');
  return {
    request,
    accept: createHash('sha1')
      .update(key + GUID)
      .digest('base64'),
  };
}

/** Check the server's response head (status line and headers, without the blank line). */
export function checkUpgradeResponse(head: string, accept: string): void {
  const [status, ...lines] = head.split('\r\n');
  if (!/^HTTP\/1\.1 101 /.test(status)) throw new ProtocolError(`WebSocket upgrade refused: ${status.slice(0, 80)}`);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  if (headers.get('upgrade')?.toLowerCase() !== 'websocket') throw new ProtocolError('WebSocket upgrade: missing "Upgrade: websocket"');
  if (headers.get('sec-websocket-accept') !== accept) throw new ProtocolError('WebSocket upgrade: wrong Sec-WebSocket-Accept');
  if (headers.has('sec-websocket-extensions')) throw new ProtocolError('WebSocket upgrade: the server chose an extension that was not offered');
}

/** One final, masked client frame (a copy: only for small messages). */
export function clientFrame(opcode: number, payload: Uint8Array): Buffer {
  const n = payload.byteLength;
  const lenBytes = n < 126 ? 0 : n < 65536 ? 2 : 8;
  const head = 2 + lenBytes;
  const out = Buffer.allocUnsafe(head + 4 + n);
  out[0] = 0x80 | opcode;
  if (lenBytes === 0) out[1] = 0x80 | n;
  else if (lenBytes === 2) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(n, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    out.writeUInt32BE(n >>> 0, 6);
  }
  const mask = randomBytes(4);
  mask.copy(out, head);
  for (let i = 0; i < n; i++) out[head + 4 + i] = payload[i] ^ mask[i & 3];
  return out;
}

/** The payload of a close frame: a status code and a UTF-8 reason. */
export function closePayload(code: number, reason: string): Buffer {
  const r = Buffer.from(reason, 'utf8');
  const out = Buffer.allocUnsafe(2 + r.byteLength);
  out.writeUInt16BE(code, 0);
  r.copy(out, 2);
  return out;
}
