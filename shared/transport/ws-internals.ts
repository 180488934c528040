// The two things zerowire needs from ws that ws keeps private (ws 8), in one place that fails loudly if ws
// ever moves them:
// - a connection's message limit. ws has one limit per server; a stranger must get only a hello-sized one
//   (a 1 GiB message from a connection that proved nothing once stalled a coordinator for seconds), and a
//   rank the size of its largest real message in this run. ws enforces it where it reads each frame's
//   length, before buffering anything, so an oversized message is refused unread.
// - a connection's TCP socket, whose byte counters are the honest "on the wire" figure and the liveness
//   detector's sign of progress below message level.
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

interface WsReceiver {
  _maxPayload?: unknown;
  _totalPayloadLength?: unknown;
}

function receiverOf(ws: WebSocket): WsReceiver {
  const receiver = Reflect.get(ws, '_receiver') as WsReceiver | undefined;
  if (!receiver || typeof receiver._maxPayload !== 'number')
    throw new Error('ws no longer keeps its message limit where zerowire sets it (receiver._maxPayload)');
  return receiver;
}

/** Limit what `ws` may send in one message from now on. */
export function limitMessages(ws: WebSocket, bytes: number): void {
  receiverOf(ws)._maxPayload = bytes;
}

/** After ws refused a message for its size: the size the sender announced (its frames so far plus the one
 *  whose header broke the limit, as ws adds them up before it refuses), or null if ws does not say. */
export function announcedBytes(ws: WebSocket): number | null {
  const total = receiverOf(ws)._totalPayloadLength;
  return typeof total === 'number' && total > 0 ? total : null;
}

/** The TCP socket under a ws WebSocket (null before it has one, or after ws let go of it). */
export function socketOf(ws: WebSocket): Socket | null {
  const socket = Reflect.get(ws, '_socket') as Socket | null | undefined;
  return socket ?? null;
}
