// Incremental reader of the WebSocket byte stream a ring link's receiving end gets from its server.
// It decides where each socket read lands (Node's `onread` asks before every read): headers and small frames
// go to a staging buffer; once a data frame's envelope has said where its payload belongs, the kernel reads
// the payload straight into that buffer. A chunk of a collective then reaches user space exactly once, where
// ws's receiver would copy it out of 64 KiB reads into a freshly allocated buffer.
import { decodeChunkEnvelope, decodeChunkFrame, ENVELOPE_BYTES, type ChunkFrame, type ChunkHeader } from './frame.js';
import { ProtocolError } from '../control/schema.js';
import { OP } from './ws-client-codec.js';

export interface ReaderSink {
  /** A data frame's envelope arrived: the buffer its payload goes to (exactly `payloadBytes` long), or null
   *  for a fresh one. May throw ProtocolError to refuse the frame. */
  destination(h: ChunkHeader, payloadBytes: number): Uint8Array | null;
  /** A whole data frame. Its payload is the destination chosen for it, or a fresh buffer. */
  frame(f: ChunkFrame): void;
  control(opcode: number, payload: Uint8Array): void;
}

const STAGING_BYTES = 64 * 1024;
/** Payload still to come at which reads go straight to the destination instead of through staging. */
const DIRECT_MIN = 8 * 1024;
/** A large chunk's headers: the envelope's frame header, the envelope, the payload frame's 64-bit header. */
const LARGE_HEADERS = 2 + ENVELOPE_BYTES + 10;

/** Where the reader is in the stream, named as ws's receiver names its states: the HTTP upgrade response,
 *  a frame header with its extended length (GET_INFO), a frame's payload through staging (GET_DATA), or
 *  straight into the destination its envelope chose (GET_DATA_DIRECT). */
type ReaderState = 'HANDSHAKE' | 'GET_INFO' | 'GET_DATA' | 'GET_DATA_DIRECT';

/** A chunk frame's payload read into its destination as it arrives, or any other message read whole. */
type ChunkMessage = { kind: 'chunk'; header: ChunkHeader; dest: Uint8Array; filled: number; since: number };
type WholeMessage = { kind: 'generic'; parts: Uint8Array[]; bytes: number };
type Message = ChunkMessage | WholeMessage;
const isChunk = (m: Message | null): m is ChunkMessage => m !== null && 'dest' in m;

export class FrameReader {
  private readonly staging = new Uint8Array(STAGING_BYTES);
  private start = 0; // unparsed bytes are staging[start, end)
  private end = 0;
  private message: Message | null = null; // a message whose final fragment has not arrived yet
  private frameLeft = 0; // payload bytes of the current data frame still to come
  private frameFin = false;
  private state: ReaderState;
  private largeFrames = false; // the last chunk was large: read only its headers into staging
  /** Bytes the socket read straight into destinations (the tests check that large payloads do). */
  directBytes = 0;

  /** `handshake` receives the HTTP response head once it is complete; the frames follow it. */
  constructor(
    private readonly sink: ReaderSink,
    private readonly maxMessage: number,
    private handshake: ((head: string) => void) | null,
  ) {
    this.state = handshake ? 'HANDSHAKE' : 'GET_INFO';
  }

  /** Where the next socket read should go. */
  readBuffer(): Uint8Array {
    if (this.state === 'GET_DATA_DIRECT') {
      const m = this.message as ChunkMessage;
      return m.dest.subarray(m.filled, m.filled + this.frameLeft);
    }
    if (this.start === this.end) this.start = this.end = 0;
    else if (this.staging.length - this.end < LARGE_HEADERS) {
      this.staging.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    const room = this.staging.length - this.end;
    const want = this.largeFrames && this.state !== 'HANDSHAKE' ? LARGE_HEADERS : room;
    return this.staging.subarray(this.end, this.end + Math.max(1, Math.min(room, want)));
  }

  /** `n` bytes were read into the buffer readBuffer() returned last. Throws ProtocolError on bad input. */
  onRead(n: number): void {
    if (this.state === 'GET_DATA_DIRECT') {
      this.directBytes += n;
      const m = this.message as ChunkMessage;
      m.filled += n;
      this.frameLeft -= n;
      if (this.frameLeft > 0) return;
      this.state = 'GET_INFO';
      this.endFrame();
      return;
    }
    this.end += n;
    if (this.state === 'HANDSHAKE' && !this.readHandshake()) return;
    for (;;) {
      if (this.state === 'GET_DATA') {
        const take = Math.min(this.frameLeft, this.end - this.start);
        if (take > 0) this.consume(this.staging.subarray(this.start, this.start + take));
        this.start += take;
        this.frameLeft -= take;
        if (this.frameLeft > 0) {
          // Staging is drained; a big remainder is read straight into place.
          if (isChunk(this.message) && this.frameLeft >= DIRECT_MIN) this.state = 'GET_DATA_DIRECT';
          return;
        }
        this.state = 'GET_INFO';
        this.endFrame();
      } else if (!this.readHeader()) return;
    }
  }

  private readHandshake(): boolean {
    const bytes = this.staging.subarray(this.start, this.end);
    const at = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf('\r\n\r\n');
    if (at < 0) {
      if (this.end - this.start >= this.staging.length - 1) throw new ProtocolError('WebSocket upgrade response too large');
      return false;
    }
    const head = Buffer.from(bytes.subarray(0, at)).toString('latin1');
    this.start += at + 4;
    const check = this.handshake!;
    this.handshake = null;
    this.state = 'GET_INFO';
    check(head);
    return true;
  }

  /** The payload length of the frame header at `at` (7 bits, or 16 or 64 after it: RFC 6455 5.2) and the
   *  header's size, or null when the bytes are not all here yet. */
  private payloadLength(at: number, avail: number): { len: number; head: number } | null {
    const s = this.staging;
    const short = s[at + 1] & 0x7f;
    if (short < 126) return { len: short, head: 2 };
    if (short === 126) return avail < 4 ? null : { len: (s[at + 2] << 8) | s[at + 3], head: 4 };
    if (avail < 10) return null;
    const view = new DataView(s.buffer, s.byteOffset + at + 2, 8);
    const hi = view.getUint32(0);
    if (hi > 0x1fffff) throw new ProtocolError('WebSocket frame length beyond 2^53');
    return { len: hi * 2 ** 32 + view.getUint32(4), head: 10 };
  }

  /** Parse one frame header (and a control frame or an envelope whole). False when more bytes are needed. */
  private readHeader(): boolean {
    const s = this.staging;
    const at = this.start;
    const avail = this.end - at;
    if (avail < 2) return false;
    const fin = (s[at] & 0x80) !== 0;
    const opcode = s[at] & 0x0f;
    if (s[at] & 0x70) throw new ProtocolError('WebSocket frame with reserved bits set (no extension was agreed)');
    if (s[at + 1] & 0x80) throw new ProtocolError('masked WebSocket frame from the server');
    const length = this.payloadLength(at, avail);
    if (!length) return false;
    const { len, head } = length;
    if (opcode >= 0x8) {
      if (!fin || len > 125) throw new ProtocolError('fragmented or oversized WebSocket control frame');
      if (opcode !== OP.close && opcode !== OP.ping && opcode !== OP.pong) throw new ProtocolError(`unknown WebSocket opcode ${opcode}`);
      if (avail < head + len) return false;
      const payload = s.slice(at + head, at + head + len);
      this.start += head + len;
      this.sink.control(opcode, payload);
      return true;
    }
    if (opcode === OP.text) throw new ProtocolError('text message on a data connection');
    if (opcode !== OP.binary && opcode !== OP.continuation) throw new ProtocolError(`unknown WebSocket opcode ${opcode}`);
    if (opcode === OP.binary && this.message) throw new ProtocolError('a new message began before the previous one ended');
    if (opcode === OP.continuation && !this.message) throw new ProtocolError('continuation frame outside a message');
    if (opcode === OP.binary && !fin && len === ENVELOPE_BYTES) {
      if (avail < head + len) return false;
      const env = decodeChunkEnvelope(s.subarray(at + head, at + head + len));
      if (env) {
        if (env.payloadBytes + ENVELOPE_BYTES > this.maxMessage)
          throw new ProtocolError(`data frame of ${env.payloadBytes} bytes exceeds this run's chunk size of ${this.maxMessage - ENVELOPE_BYTES} bytes`);
        this.start += head + len;
        const dest = this.sink.destination(env.header, env.payloadBytes) ?? new Uint8Array(env.payloadBytes);
        if (dest.byteLength !== env.payloadBytes) throw new Error(`destination of ${dest.byteLength} bytes for a payload of ${env.payloadBytes}`);
        this.message = { kind: 'chunk', header: env.header, dest, filled: 0, since: performance.now() };
        this.largeFrames = env.payloadBytes >= DIRECT_MIN;
        return true;
      }
    }
    this.start += head;
    if (opcode === OP.binary) this.message = { kind: 'generic', parts: [], bytes: 0 };
    const m = this.message!;
    if (isChunk(m) && m.filled + len > m.dest.byteLength)
      throw new ProtocolError(`data frame: payload longer than the ${m.dest.byteLength} bytes its envelope announced`);
    if (!isChunk(m) && m.bytes + len > this.maxMessage) throw new ProtocolError(`message exceeds the limit of ${this.maxMessage} bytes`);
    this.frameLeft = len;
    this.frameFin = fin;
    if (len === 0) this.endFrame();
    else this.state = 'GET_DATA';
    return true;
  }

  private consume(bytes: Uint8Array): void {
    const m = this.message!;
    if (isChunk(m)) {
      m.dest.set(bytes, m.filled);
      m.filled += bytes.byteLength;
    } else {
      m.parts.push(bytes.slice());
      m.bytes += bytes.byteLength;
    }
  }

  private endFrame(): void {
    if (!this.frameFin) return;
    const m = this.message!;
    this.message = null;
    if (!isChunk(m)) {
      const whole = new Uint8Array(m.bytes);
      let at = 0;
      for (const p of m.parts) whole.set(p, (at += p.byteLength) - p.byteLength);
      this.sink.frame(decodeChunkFrame(whole));
      return;
    }
    if (m.filled !== m.dest.byteLength) throw new ProtocolError(`data frame: payload has ${m.filled} bytes, its envelope announced ${m.dest.byteLength}`);
    this.sink.frame({ ...m.header, payload: m.dest, envelopeBytes: ENVELOPE_BYTES, firstByteMs: m.since });
  }
}
