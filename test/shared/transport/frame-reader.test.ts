// The ring's receiving end parses the WebSocket stream itself. Fed as a socket would feed it (reads of any
// size, never beyond the buffer it handed out), it must deliver every frame whole, put large payloads
// straight into their destination, and refuse anything malformed with a ProtocolError.
import { randomBytes } from 'node:crypto';
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { encodeChunkEnvelope, type ChunkFrame, type ChunkHeader } from '../../../shared/transport/frame.js';
import { FrameReader } from '../../../shared/transport/frame-reader.js';
import { ProtocolError } from '../../../shared/control/schema.js';
import { seeded } from '../../helpers/seed.js';

const random = seeded();

/** A server's (unmasked) frame. */
function frame(opcode: number, payload: Uint8Array, fin = true, rsv = 0): Buffer {
  const n = payload.byteLength;
  const head = n < 126 ? Buffer.from([0, n]) : n < 65536 ? Buffer.from([0, 126, n >> 8, n & 255]) : Buffer.alloc(10);
  if (n >= 65536) {
    head[1] = 127;
    head.writeUInt32BE(n, 6);
  }
  head[0] = (fin ? 0x80 : 0) | rsv | opcode;
  return Buffer.concat([head, payload]);
}

/** Our two-fragment data message. */
function dataMessage(h: ChunkHeader, payload: Uint8Array): Buffer {
  return Buffer.concat([frame(2, encodeChunkEnvelope(h, payload.byteLength), false), frame(0, payload)]);
}

const HANDSHAKE = Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');

/** Feed `stream` to a reader in reads of random size, the way a socket would. */
function feed(stream: Uint8Array, dest: (h: ChunkHeader) => Uint8Array | null, maxRead: number) {
  const frames: ChunkFrame[] = [];
  const controls: number[] = [];
  let heads = 0;
  const reader = new FrameReader({ destination: (h) => dest(h), frame: (f) => frames.push(f), control: (op) => controls.push(op) }, 64 << 20, () => heads++);
  for (let at = 0; at < stream.byteLength;) {
    const buf = reader.readBuffer();
    const n = Math.min(buf.byteLength, stream.byteLength - at, 1 + random.int(maxRead));
    buf.set(stream.subarray(at, at + n));
    at += n;
    reader.onRead(n);
  }
  return { frames, controls, heads, reader };
}

describe(`FrameReader (seed ${random.seed})`, () => {
  it('delivers every frame, in order, from reads of any size; large payloads are read in place', () => {
    const big = new Float32Array(300_000).map((_, i) => i);
    const small = new Float32Array([1, 2, 3]);
    const h = (coll: number, elements: number): ChunkHeader => ({ coll, step: 0, chunk: 0, dtype: 'fp32', elements });
    const generic = pack(['data', 9, 0, 0, 0, 3, Buffer.from(small.buffer)]); // any msgpack writer's single frame
    const stream = Buffer.concat([
      HANDSHAKE,
      dataMessage(h(1, big.length), new Uint8Array(big.buffer)),
      frame(9, Buffer.from('hi')), // a ping between messages
      dataMessage(h(2, small.length), new Uint8Array(small.buffer)),
      frame(2, generic),
      dataMessage(h(3, big.length), new Uint8Array(big.buffer)),
    ]);
    for (const maxRead of [1, 7, 4096, 1 << 20]) {
      const targets = new Map<number, Uint8Array>();
      const { frames, controls, heads, reader } = feed(
        stream,
        (hd) => {
          const t = new Uint8Array(hd.elements * 4);
          targets.set(hd.coll, t);
          return t;
        },
        maxRead,
      );
      expect(heads).toBe(1);
      expect(controls).toEqual([9]);
      expect(frames.map((f) => f.coll)).toEqual([1, 2, 9, 3]);
      expect(new Float32Array(frames[0].payload.slice().buffer)).toEqual(big);
      expect(new Float32Array(frames[2].payload.slice().buffer)).toEqual(small);
      expect(frames[0].payload).toBe(targets.get(1)); // the destination itself, not a copy
      expect(frames[3].payload).toBe(targets.get(3));
      if (maxRead >= 4096) expect(reader.directBytes).toBeGreaterThan(0.9 * 2 * big.byteLength);
    }
  });

  it('a payload split over several continuation frames is joined in its destination', () => {
    const payload = randomBytes(40_000);
    const env = encodeChunkEnvelope({ coll: 0, step: 0, chunk: 0, dtype: 'bf16', elements: 20_000 }, payload.byteLength);
    const stream = Buffer.concat([
      HANDSHAKE,
      frame(2, env, false),
      frame(0, payload.subarray(0, 10), false),
      frame(10, new Uint8Array(0)),
      frame(0, payload.subarray(10)),
    ]);
    const { frames, controls } = feed(stream, () => null, 5000);
    expect(controls).toEqual([10]);
    expect(Buffer.from(frames[0].payload).equals(payload)).toBe(true);
  });

  const bad: [string, Buffer, RegExp][] = [
    ['a masked frame', Buffer.from([0x82, 0x81, 1, 2, 3, 4, 5]), /masked/],
    ['reserved bits', frame(2, Buffer.from([1]), true, 0x40), /reserved bits/],
    ['a text message', frame(1, Buffer.from('x')), /text message/],
    ['an unknown opcode', frame(3, Buffer.from('x')), /opcode 3/],
    ['a continuation outside a message', frame(0, Buffer.from('x')), /continuation/],
    [
      'a payload longer than announced',
      Buffer.concat([frame(2, encodeChunkEnvelope({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: 1 }, 4), false), frame(0, Buffer.alloc(8))]),
      /longer than/,
    ],
    [
      'a payload shorter than announced',
      Buffer.concat([frame(2, encodeChunkEnvelope({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: 2 }, 8), false), frame(0, Buffer.alloc(4))]),
      /payload has 4 bytes/,
    ],
    ['a fragmented ping', frame(9, Buffer.from('x'), false), /control frame/],
    ['garbage msgpack', frame(2, Buffer.from([0xc1, 0xc1])), /not msgpack/],
  ];
  for (const [name, bytes, why] of bad) {
    it(`refuses ${name}`, () => {
      expect(() => feed(Buffer.concat([HANDSHAKE, bytes]), () => null, 1 << 20)).toThrow(why);
    });
  }

  it('2000 random and mutated streams: frames or a ProtocolError, nothing else', () => {
    const good = dataMessage({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: 4 }, new Uint8Array(16));
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const body = i % 2 ? Buffer.from(good) : randomBytes(1 + (i % 97));
      if (i % 2) for (let k = 0; k < 1 + (i % 4); k++) body[random.int(body.length)] = random.int(256);
      try {
        feed(Buffer.concat([HANDSHAKE, body]), () => null, 64);
      } catch (err) {
        expect(err).toBeInstanceOf(ProtocolError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(500);
  });
});
