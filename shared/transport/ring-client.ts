// The dialling end of a ring link: a WebSocket client on a plain TCP socket whose reads are steered by a
// FrameReader (payloads land in their destination, see frame-reader.ts). The server end is an ordinary ws
// server, so the bytes on the wire are standard RFC 6455 in both directions. With TLS the same reads come
// out of a TLSSocket, decrypted (Node's onread works there too).
import { connect, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { tlsFailure, type LinkTls } from './link-tls.js';
import type { ChunkFrame, ChunkHeader } from './frame.js';
import { FrameReader } from './frame-reader.js';
import { closeReason } from './close-reason.js';
import { checkUpgradeResponse, clientFrame, closePayload, OP, upgradeRequest } from './ws-client-codec.js';

/** What a link's owner hears from its transport (the same for both ends; see channel.ts). */
export interface LinkEvents {
  destination(h: ChunkHeader, payloadBytes: number): Uint8Array | null;
  frame(f: ChunkFrame): void;
  /** Any sign of life from the peer (data, ping, pong). */
  heard(): void;
  closed(code: number, reason: string): void;
  /** A socket error or a protocol violation by the peer. */
  failed(err: Error): void;
}

const CLOSE_GRACE_MS = 1000;

export class RingClient {
  private events: LinkEvents | null = null;
  private early: ChunkFrame[] = []; // frames that arrived before attach()
  private state: 'connecting' | 'open' | 'closing' | 'closed' = 'connecting';
  private closeFrame: { code: number; reason: string } | null = null;
  /** Told of every pong (the pre-flight times round trips with pings). */
  onPong: (() => void) | null = null;

  private constructor(
    readonly socket: Socket,
    private readonly reader: FrameReader,
  ) {}

  /** Connect (over TLS when `tls` is given) and complete the WebSocket handshake. */
  static connect(host: string, port: number, maxMessage: number, timeoutMs: number, tls?: LinkTls): Promise<RingClient> {
    const { request, accept } = upgradeRequest(host, port);
    return new Promise((resolve, reject) => {
      let client: RingClient | null = null;
      const reader = new FrameReader(
        {
          destination: (h, n) => client!.events?.destination(h, n) ?? null,
          frame: (f) => (client!.events ? client!.events.frame(f) : client!.early.push(f)),
          control: (op, payload) => client!.onControl(op, payload),
        },
        maxMessage,
        (head) => {
          checkUpgradeResponse(head, accept);
          client!.state = 'open';
          clearTimeout(timer);
          resolve(client!);
        },
      );
      const onread = {
        buffer: () => reader.readBuffer(),
        callback: (n: number) => {
          client!.onRead(n);
          return true;
        },
      };
      const socket = tls
        ? connectTls({ host, port, ca: tls.ca, checkServerIdentity: () => undefined, onread } as ConnectionOptions)
        : connect({ host, port, onread });
      client = new RingClient(socket, reader);
      socket.setNoDelay(true);
      const fail = (err: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(() => fail(new Error(`WebSocket handshake not completed within ${timeoutMs} ms`)), timeoutMs);
      socket.once(tls ? 'secureConnect' : 'connect', () => socket.write(request));
      socket.on('error', (err) => (client!.state === 'connecting' ? fail(new Error(tlsFailure(err), { cause: err })) : client!.events?.failed(err)));
      socket.on('close', () => {
        if (client!.state === 'connecting') return fail(new Error('connection closed during the WebSocket handshake'));
        client!.state = 'closed';
        const c = client!.closeFrame ?? { code: 1006, reason: '' };
        client!.events?.closed(c.code, c.reason);
      });
      client.failHandshake = fail;
    });
  }

  private failHandshake: (err: Error) => void = () => undefined;

  /** Start delivering frames and events to `events` (once the owner exists). */
  attach(events: LinkEvents): void {
    this.events = events;
    for (const f of this.early.splice(0)) events.frame(f);
    if (this.state === 'closed') events.closed(this.closeFrame?.code ?? 1006, this.closeFrame?.reason ?? ''); // closed before attach
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Send one binary message (masked, copied: the ring only sends small things this way). */
  sendMessage(data: Uint8Array, onWritten?: () => void): void {
    this.write(clientFrame(OP.binary, data), onWritten);
  }

  ping(): void {
    this.write(clientFrame(OP.ping, new Uint8Array(0)));
  }

  /** Send a close frame and end the connection. Nothing more is read: the buffer the socket would read into
   *  next may be a collective's output, which belongs to the caller again once that collective has failed. */
  close(code: number, reason: string): void {
    if (this.state !== 'open') return;
    this.state = 'closing';
    this.socket.pause();
    this.write(clientFrame(OP.close, closePayload(code, closeReason(reason))));
    this.socket.end(() => this.socket.destroy());
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref(); // a peer that never drains our close frame
  }

  terminate(): void {
    this.socket.destroy();
  }

  private write(frame: Buffer, onWritten?: () => void): void {
    if (this.socket.destroyed || this.state === 'closed') return;
    this.socket.write(frame, onWritten ? () => onWritten() : undefined);
  }

  private onRead(n: number): void {
    try {
      this.reader.onRead(n);
      this.events?.heard();
    } catch (err) {
      if (this.state === 'connecting') return this.failHandshake(err as Error);
      this.events?.failed(err as Error); // the channel aborts, which closes: the socket reads nothing more
      this.close(1002, (err as Error).message);
    }
  }

  private onControl(opcode: number, payload: Uint8Array): void {
    if (opcode === OP.ping) this.write(clientFrame(OP.pong, payload));
    else if (opcode === OP.pong) this.onPong?.();
    else if (opcode === OP.close) {
      const code = payload.byteLength >= 2 ? (payload[0] << 8) | payload[1] : 1005;
      this.closeFrame = { code, reason: Buffer.from(payload.subarray(2)).toString('utf8') };
      if (this.state === 'open') {
        this.state = 'closing';
        this.write(clientFrame(OP.close, payload.byteLength >= 2 ? payload.subarray(0, 2) : new Uint8Array(0)));
      }
      this.socket.end();
    }
  }
}
