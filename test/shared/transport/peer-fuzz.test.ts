// Strangers and garbage at a rank's peer port, and malformed frames inside an established ring link.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { helloProof } from '../../../shared/transport/auth.js';
import { WsTransport, type PeerChannel } from '../../../shared/transport/channel.js';
import { Collectives } from '../../../shared/collectives/collectives.js';
import { decodeChunkFragments, encodeChunkEnvelope } from '../../../shared/transport/frame.js';
import { PeerListener, Ring, dialPeer, wireRing } from '../../../shared/transport/ring.js';
import { ProtocolError } from '../../../shared/control/schema.js';
import { seeded } from '../../helpers/seed.js';

const random = seeded();

describe(`frame decoder (seed ${random.seed})`, () => {
  it('5000 random and mutated frames: a valid frame or a ProtocolError, never anything else', () => {
    const payload = Buffer.from(new Float32Array([1, 2, 3, 4]).buffer);
    const env = encodeChunkEnvelope({ coll: 3, step: 1, chunk: 0, dtype: 'fp32', elements: 4 }, payload.byteLength);
    expect(decodeChunkFragments([env, payload]).elements).toBe(4);
    let refused = 0;
    for (let i = 0; i < 5000; i++) {
      const frags = i % 2 ? [Buffer.from(env), Buffer.from(payload)] : [randomBytes(1 + (i % 64)), randomBytes(i % 33)];
      if (i % 2) for (let k = 0; k < 1 + (i % 3); k++) frags[0][random.int(frags[0].length)] = random.int(256);
      try {
        const f = decodeChunkFragments(frags);
        expect(f.payload.byteLength).toBe(f.elements * (f.dtype === 'fp32' ? 4 : 2));
      } catch (err) {
        expect(err).toBeInstanceOf(ProtocolError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(2500);
  });
});

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe('peer port', () => {
  it('garbage hellos and forged proofs are refused with a reason; the real ring still wires afterwards', async () => {
    const runId = 'run-1';
    const key = randomBytes(32);
    const a = await PeerListener.open(0, '127.0.0.1');
    const b = await PeerListener.open(0, '127.0.0.1');
    try {
      // Strangers connect to rank 0's port before the ring is wired: garbage, forged proofs, wrong run.
      const strangers = [];
      for (let i = 0; i < 60; i++) {
        const ws = new WebSocket(`ws://127.0.0.1:${a.port}`);
        const message =
          i % 3 === 0
            ? randomBytes(1 + i)
            : i % 3 === 1
              ? pack({ type: 'hello', rank: 1, runId, proof: randomBytes(32) })
              : pack({ type: 'hello', rank: 1, runId: 'other', proof: helloProof(key, 'other', 1) });
        ws.on('open', () => ws.send(message));
        ws.on('error', () => undefined);
        strangers.push(closed(ws));
        await new Promise((r) => ws.once('open', r));
      }
      const [r0, r1] = await Promise.all([
        wireRing({ rank: 0, world: 2, runId, ringKey: key, listener: a, prev: { host: '127.0.0.1', port: b.port }, timeoutMs: 5000, chunkBytes: 1 << 20 }),
        wireRing({ rank: 1, world: 2, runId, ringKey: key, listener: b, prev: { host: '127.0.0.1', port: a.port }, timeoutMs: 5000, chunkBytes: 1 << 20 }),
      ]);
      for (const s of await Promise.all(strangers)) {
        expect(s.code).toBe(1008);
        expect(s.reason).toMatch(/^refused: /);
      }
      // The wired ring works.
      const c0 = new Collectives(r0, { chunkBytes: 1024, timeoutMs: 5000 });
      const c1 = new Collectives(r1, { chunkBytes: 1024, timeoutMs: 5000 });
      const x0 = new Float32Array([1, 2, 3]);
      const x1 = new Float32Array([10, 20, 30]);
      await Promise.all([c0.allReduce(x0), c1.allReduce(x1)]);
      expect(Array.from(x0)).toEqual([11, 22, 33]);
      r0.close();
      r1.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('strangers at a peer port', () => {
  it('a silent connection is cut within seconds, an oversized message refused unread, and once the ring is wired nobody gets in', async () => {
    const runId = 'run-3';
    const key = randomBytes(32);
    const a = await PeerListener.open(0, '127.0.0.1');
    const b = await PeerListener.open(0, '127.0.0.1');
    try {
      const silent = connect(a.port, '127.0.0.1');
      silent.on('error', () => undefined);
      const silentClosed = new Promise<number>((resolve) => {
        const t0 = Date.now();
        silent.once('close', () => resolve(Date.now() - t0));
      });
      const big = new WebSocket(`ws://127.0.0.1:${a.port}`);
      big.on('error', () => undefined);
      big.on('open', () => big.send(randomBytes(1 << 20)));
      expect((await closed(big)).code).toBe(1009);
      // A forged hello held while rank 0 waits for its ring key...
      const forged = new WebSocket(`ws://127.0.0.1:${a.port}`);
      forged.on('error', () => undefined);
      forged.on('open', () => forged.send(pack({ type: 'hello', rank: 5, runId, proof: randomBytes(32) })));
      const forgedClosed = closed(forged);
      const [r0, r1] = await Promise.all([
        wireRing({ rank: 0, world: 2, runId, ringKey: key, listener: a, prev: { host: '127.0.0.1', port: b.port }, timeoutMs: 5000, chunkBytes: 1 << 20 }),
        wireRing({ rank: 1, world: 2, runId, ringKey: key, listener: b, prev: { host: '127.0.0.1', port: a.port }, timeoutMs: 5000, chunkBytes: 1 << 20 }),
      ]);
      // ...is closed once the ring is wired, and a newcomer is cut at once.
      expect(await forgedClosed).toEqual({ code: 1008, reason: 'refused: the ring is wired' });
      const late = connect(a.port, '127.0.0.1');
      late.on('error', () => undefined);
      await new Promise((resolve) => late.once('close', resolve));
      expect(await silentClosed).toBeLessThan(7000);
      r0.close();
      r1.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

/** A 2-rank ring where rank 0 is under the test's control, so it can send whatever it likes to rank 1. */
async function victimRing(chunkBytes = 16, timeoutMs = 5000) {
  const runId = 'run-2';
  const key = randomBytes(32);
  const attacker = await PeerListener.open(0, '127.0.0.1');
  const victimListener = await PeerListener.open(0, '127.0.0.1');
  const [toVictim, victimPrev, victimNext, attackerPrev] = await Promise.all([
    attacker.expect(1, runId, key, 5000),
    dialPeer({ host: '127.0.0.1', port: attacker.port }, 1, 0, { runId, ringKey: key }, { chunkBytes, timeoutMs: 5000 }),
    victimListener.expect(0, runId, key, 5000),
    dialPeer({ host: '127.0.0.1', port: victimListener.port }, 0, 1, { runId, ringKey: key }, { chunkBytes: 1 << 20, timeoutMs: 5000 }),
  ]);
  const victim = new Collectives(new Ring(1, 2, victimNext, victimPrev), { chunkBytes, timeoutMs });
  const raw = (toVictim.transport as WsTransport).ws;
  const close = async () => {
    for (const c of [toVictim, victimPrev, victimNext, attackerPrev]) c.close();
    await attacker.close();
    await victimListener.close();
  };
  return { victim, toVictim: toVictim as PeerChannel, raw, close };
}

describe('malformed frames inside an established link', () => {
  const f32 = (n: number) => new Uint8Array(new Float32Array(n).buffer);
  const cases: [string, (c: PeerChannel, raw: WebSocket) => void, RegExp][] = [
    ['garbage bytes', (_c, raw) => raw.send(randomBytes(77)), /not msgpack|data frame|exceeds the limit/],
    ['a text message', (_c, raw) => raw.send('hello'), /text message/],
    [
      "a chunk larger than the run's chunk size",
      (c) => c.send({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: 5 }, f32(5)),
      /data frame of 20 bytes exceeds this run's chunk size of 16 bytes/,
    ],
    ['a wrong step', (c) => c.send({ coll: 0, step: 5, chunk: 0, dtype: 'fp32', elements: 4 }, f32(4)), /unexpected or repeated frame: step 5/],
    ['a wrong chunk', (c) => c.send({ coll: 0, step: 0, chunk: 9, dtype: 'fp32', elements: 4 }, f32(4)), /frame chunk 9/],
    ['a wrong dtype', (c) => c.send({ coll: 0, step: 0, chunk: 0, dtype: 'bf16', elements: 4 }, new Uint8Array(8)), /frame dtype bf16, expected fp32/],
    [
      'a length that does not match the header',
      (c, raw) => {
        raw.send(encodeChunkEnvelope({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: 4 }, 12), { fin: false });
        raw.send(f32(3), { fin: true });
      },
      /data frame/,
    ],
    [
      'a repeated frame',
      (c) => {
        c.send({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: 4 }, f32(4));
        c.send({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: 4 }, f32(4));
      },
      /unexpected or repeated frame|collective 0, which has already finished/,
    ],
  ];
  for (const [name, inject, why] of cases) {
    it(`${name}: the collective fails with a clear error and the link is closed`, async () => {
      const { victim, toVictim, raw, close } = await victimRing();
      try {
        const buf = new Float32Array(8); // 2 ranks, 4 elements per segment, 4 per chunk
        const pending = victim.allReduce(buf);
        inject(toVictim, raw);
        await expect(pending).rejects.toThrow(why);
        expect(toVictim.failed ?? (await new Promise((r) => setTimeout(r, 100)), toVictim.failed)).toBeTruthy();
      } finally {
        await close();
      }
    });
  }
});

describe('a collective that fails in the middle of a payload', () => {
  it("leaves the caller's buffer alone afterwards, even while a large payload was being read straight into it", async () => {
    const { victim, raw, close } = await victimRing(64 << 10, 300);
    try {
      const S = 16384; // one 64 KiB chunk per segment: read in place, into the caller's output
      const output = new Float32Array(2 * S);
      const pending = victim.allGather(new Float32Array(S).fill(1), output);
      const socket = (raw as unknown as { _socket: import('node:net').Socket })._socket;
      const env = encodeChunkEnvelope({ coll: 0, step: 0, chunk: 0, dtype: 'fp32', elements: S }, 4 * S);
      const head = Buffer.from([0x80, 127, 0, 0, 0, 0, 0, 1, 0, 0]); // final continuation frame of 65536 bytes
      socket.write(Buffer.concat([Buffer.from([0x02, env.length]), env, head, Buffer.alloc(1000, 0x7f)]));
      await expect(pending).rejects.toThrow(/timed out/);
      const after = output.slice();
      socket.write(Buffer.alloc(4 * S - 1000, 0x7f)); // the rest of the payload arrives after the failure
      await new Promise((r) => setTimeout(r, 300));
      expect(Buffer.from(output.buffer).equals(Buffer.from(after.buffer))).toBe(true);
    } finally {
      await close();
    }
  });
});
