// How large a WebSocket message a connection may send, set per connection. ws has one limit per server;
// a stranger must get only a hello-sized one (a 1 GiB message from a connection that proved nothing once
// stalled a coordinator for seconds), and a rank that proved itself the size of its largest real message.
// ws enforces the limit where it reads each frame's length, before buffering anything, so the stranger's
// bytes are refused unread. ws keeps that limit in its receiver's private `_maxPayload` (ws 8); this is
// the one place that reaches for it, and it fails loudly if ws ever moves it.
import type { WebSocket } from 'ws';

/** Limit what `ws` may send in one message from now on. */
export function limitMessages(ws: WebSocket, bytes: number): void {
  const receiver = (ws as unknown as { _receiver?: { _maxPayload?: unknown } })._receiver;
  if (!receiver || typeof receiver._maxPayload !== 'number')
    throw new Error('ws no longer keeps its message limit where zerowire sets it (receiver._maxPayload)');
  receiver._maxPayload = bytes;
}
