// The pre-flight link test: before any scheme runs, each measured link carries data over the same path a
// collective uses (a ring-authenticated WebSocket, chunk frames read by the same client), with one stream and
// then with several, and times its round trip with pings on an idle connection. It answers "which link is
// slow" before a figure of the run looks wrong (NCCL users bisect with all-reduce tests on pairs of nodes).
// Every round trip is timed before any probe sends data (`quiet`: every rank of the run has timed its own): a
// ping queued behind another link's probe on a shared NIC read that queue, 1-3 ms on lan.sh's 0.2 ms links.
//
// A round pairs every prober with one peer to send to and one to receive from, all at once, like a ring
// step: the ring pre-flight is one round over the ring, all-pairs is H-1 rounds over one rank per host
// (round k: host i sends to host i+k). The receiver measures and ends each phase: it closes the streams
// once data has arrived for PROBE.ms, so a slow link costs no more time than a fast one.
import { performance } from 'node:perf_hooks';
import { theilSenSlope } from '../tensor/stats.js';
import type { PeerChannel } from './channel.js';
import { ClientTransport } from './channel.js';
import { dialPeer, type PeerAddress, type PeerListener } from './ring.js';
import { blastPlain, dialPlain, type PlainLink } from './plain-tcp.js';

const PROBE = {
  ms: 250, // data arriving per phase
  settleMs: 50, // left out at the start of a phase
  sampleMs: 5, // how often the receiver reads its sockets' byte counters
  streams: 4, // the several-streams phase
  pings: 5, // round trips timed (the least is reported)
  window: 4, // frames a sender keeps in flight per stream
  frameBytes: 256 << 10,
  minSamples: 12, // settled samples the slope needs; a receiver whose event loop stalled waits for them
  maxMs: 1000, // ... up to this long, then reads the mean rate instead
};

/** One direction of one link, as its receiver measured it. */
export interface LinkProbe {
  from: number; // sending rank
  to: number; // receiving rank (who reports)
  mbit: number; // one stream, Mbit/s of payload
  mbitMulti: number; // PROBE.streams streams together
  streams: number;
  rttMs: number; // least of PROBE.pings round trips on an idle connection, before any probe sent data
  // The same link with plain TCP sockets (plain-tcp.ts: no WebSocket, no msgpack), 1 stream and `streams`:
  // the ceiling zerowire's transport is read against. Absent in reports written before it was measured.
  plainMbit?: number;
  plainMbitMulti?: number;
}

/** A link's rate for the predictors (`simulate --run`, `plan --run`), Mbit/s of payload. Between hosts, the
 *  best of its four readings: each is one try at the wire's rate, and a probe that shares a busy core reads it
 *  low (a 4 x 2 lan.sh run read one 1 Gbit/s link at 708 Mbit/s on zerowire's transport and 948 on plain TCP;
 *  its collectives then moved at about 955). Inside a host there is no wire: zerowire's transport sets the
 *  pace there (plain TCP reads loopback 2-3x faster), so the better of its own two readings. */
export function linkRateMbit(l: LinkProbe, betweenHosts: boolean): number {
  const ours = Math.max(l.mbit, l.mbitMulti);
  return betweenHosts ? Math.max(ours, l.plainMbit ?? 0, l.plainMbitMulti ?? 0) : ours;
}

export interface ProbeRound {
  sendTo: number | null;
  recvFrom: number | null;
}

/** Who this rank sends to and receives from in each round. Ring: each rank from the one before it. All
 *  pairs: one rank per host (the first of each), round k from host i to host i+k. */
export function probeRounds(mode: 'off' | 'ring' | 'all-pairs', self: number, hosts: readonly string[]): ProbeRound[] {
  const world = hosts.length;
  if (mode === 'off' || world < 2) return [];
  if (mode === 'ring') return [{ sendTo: (self + 1) % world, recvFrom: (self - 1 + world) % world }];
  const leaders = hosts.flatMap((h, r) => (hosts.indexOf(h) === r ? [r] : []));
  const i = leaders.indexOf(self);
  const H = leaders.length;
  if (i < 0 || H < 2) return [];
  return Array.from({ length: H - 1 }, (_, k) => ({ sendTo: leaders[(i + k + 1) % H], recvFrom: leaders[(i - k - 1 + H) % H] }));
}

interface ProbeContext {
  self: number;
  peers: readonly PeerAddress[]; // by rank
  listener: PeerListener;
  runId: string;
  ringKey: Uint8Array;
  timeoutMs: number;
  /** Resolves once every rank of the run has timed its round trips (absent: this rank's probes are the run's). */
  quiet?: () => Promise<void>;
}

/** Connection names: per round, 0 = the idle one pings run on, 1 = one stream, 2.. = the several; then the
 *  same two phases over plain TCP. */
const name = (round: number, kind: number) => `probe:${round * 16 + kind}` as const;
const PLAIN_ONE = 2 + PROBE.streams;
const PLAIN_SEVERAL = PLAIN_ONE + 1;

/** Run the rounds; returns what this rank received, link by link. */
export async function probeLinks(ctx: ProbeContext, rounds: ProbeRound[]): Promise<LinkProbe[]> {
  const rtts: (number | null)[] = [];
  for (const [k, r] of rounds.entries()) rtts.push(r.recvFrom === null ? null : await roundTripsFrom(ctx, k, r.recvFrom));
  await ctx.quiet?.();
  const out: LinkProbe[] = [];
  for (const [k, r] of rounds.entries()) {
    const from = r.recvFrom;
    const [, got] = await Promise.all([r.sendTo === null ? null : serve(ctx, k, r.sendTo), from === null ? null : measure(ctx, k, from, rtts[k]!)]);
    if (got) out.push(got);
  }
  return out;
}

/** The sending end: accept the receiver's connections and send on each until it closes them. */
async function serve(ctx: ProbeContext, round: number, to: number): Promise<void> {
  const accept = (kind: number) => ctx.listener.expect(to, ctx.runId, ctx.ringKey, ctx.timeoutMs, name(round, kind));
  // Connection 0 only carries the receiver's pings, which the WebSocket server answers by itself: it is never
  // accepted here (the receiver is done with it before any round's data is sent).
  await blast([await accept(1)]);
  await blast(await Promise.all(Array.from({ length: PROBE.streams }, (_, s) => accept(2 + s))));
  const plain = (kind: number) => ctx.listener.expectPlain(to, ctx.runId, ctx.ringKey, ctx.timeoutMs, name(round, kind));
  await blastPlain([await plain(PLAIN_ONE)], PROBE.frameBytes);
  await blastPlain(await Promise.all(Array.from({ length: PROBE.streams }, (_, s) => plain(PLAIN_SEVERAL + s))), PROBE.frameBytes);
}

/** Send frames on every channel, PROBE.window in flight each, until the receiver closes them. */
function blast(channels: PeerChannel[]): Promise<void> {
  const payload = new Uint8Array(PROBE.frameBytes);
  return Promise.all(
    channels.map(
      (ch) =>
        new Promise<void>((resolve) => {
          let chunk = 0;
          let inFlight = 0;
          // A send on a closed WebSocket calls back at once (on the next tick): stop at the close itself, or
          // this loop would starve the event loop that delivers it.
          const pump = () => {
            if (ch.failed || !ch.transport.isOpen) return resolve();
            while (inFlight < PROBE.window) {
              inFlight++;
              ch.send({ coll: 0, step: 0, chunk: chunk++, dtype: 'fp32', elements: PROBE.frameBytes / 4 }, payload, () => {
                inFlight--;
                pump();
              });
            }
          };
          ch.onFailure(() => resolve()); // the receiver closed it: done
          pump();
        }),
    ),
  ).then(() => undefined);
}

const dialProbe = (ctx: ProbeContext, round: number, from: number, kind: number) =>
  dialPeer(ctx.peers[from], ctx.self, from, ctx, { chunkBytes: PROBE.frameBytes, timeoutMs: ctx.timeoutMs }, name(round, kind), ctx.listener.tls);

/** The receiving end's round trips to `from`, on a connection of their own. */
async function roundTripsFrom(ctx: ProbeContext, round: number, from: number): Promise<number> {
  const idle = await dialProbe(ctx, round, from, 0);
  try {
    return await roundTrips(idle);
  } finally {
    idle.close();
  }
}

/** The receiving end: receive on one stream and on several, WebSocket then plain TCP. */
async function measure(ctx: ProbeContext, round: number, from: number, rttMs: number): Promise<LinkProbe> {
  const dial = (kind: number) => dialProbe(ctx, round, from, kind);
  const one = await receive([await dial(1)]);
  const several = await receive(await Promise.all(Array.from({ length: PROBE.streams }, (_, s) => dial(2 + s))));
  const plain = (kind: number) => dialPlain(ctx.peers[from], ctx.self, ctx, name(round, kind), ctx.timeoutMs, ctx.listener.tls);
  const plainOne = await receivePlain([await plain(PLAIN_ONE)]);
  const plainSeveral = await receivePlain(await Promise.all(Array.from({ length: PROBE.streams }, (_, s) => plain(PLAIN_SEVERAL + s))));
  return { from, to: ctx.self, mbit: one, mbitMulti: several, streams: PROBE.streams, rttMs, plainMbit: plainOne, plainMbitMulti: plainSeveral };
}

async function roundTrips(ch: PeerChannel): Promise<number> {
  const client = (ch.transport as ClientTransport).client;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < PROBE.pings; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      client.onPong = () => resolve();
      ch.onFailure(reject);
      ch.transport.ping();
    });
    best = Math.min(best, performance.now() - t0);
  }
  client.onPong = null;
  return best;
}

/** Bytes per ms: the robust slope where the samples are enough and it is positive, else the mean rate over
 *  the samples' span. */
function slopeOrMean(points: readonly { x: number; y: number }[], enough: boolean): number {
  const slope = enough ? theilSenSlope(points) : 0;
  if (slope > 0 || points.length < 2) return slope;
  const a = points[0];
  const b = points[points.length - 1];
  return b.x > a.x ? (b.y - a.y) / (b.x - a.x) : 0;
}

/** Mbit/s over the channels together, once PROBE.ms have passed since the first frame arrived; then they
 *  are closed. The settling is left out: TCP's slow start and a shaper's burst allowance would otherwise count.
 *  The sockets' byte counters are sampled every PROBE.sampleMs, not frames counted as they complete: four
 *  streams at one rate complete their frames together, in bunches a frame apart. The rate is the robust
 *  slope of bytes over time: a receiver whose event loop stalls on a busy machine reads the backlog late,
 *  and those few late points would otherwise set it (a 30 ms stall as the window opens would read a link
 *  15% fast). Socket bytes are the payload and its framing, a few dozen bytes per 256 KiB frame. */
function receive(channels: PeerChannel[]): Promise<number> {
  const scratch = new Uint8Array(PROBE.frameBytes);
  return sampleRate({
    bytesRead: () => channels.reduce((sum, ch) => sum + ch.socketReceived(), 0),
    start: (first, failed) => {
      for (const ch of channels) {
        ch.onFailure(failed);
        ch.listen(0, { destination: (h) => scratch.subarray(0, h.elements * 4), frame: first });
      }
    },
    stop: () => channels.forEach((c) => c.transport.terminate()), // at once: a polite close would queue behind the data
  });
}

/** The same reading of plain sockets: their bytes read, from the first data on. */
function receivePlain(links: PlainLink[]): Promise<number> {
  return sampleRate({
    bytesRead: () => links.reduce((sum, l) => sum + l.socket.bytesRead, 0),
    start: (first, failed) => {
      for (const l of links) {
        l.onData = first;
        l.socket.once('close', () => failed(new Error('the sender closed a plain TCP probe early')));
      }
    },
    stop: () => links.forEach((l) => l.socket.destroy()),
  });
}

/** Mbit/s of what `bytesRead` counts, sampled every PROBE.sampleMs once the first data came (`first`), the
 *  settling left out; then `stop`. */
function sampleRate(src: { bytesRead: () => number; start: (first: () => void, failed: (e: Error) => void) => void; stop: () => void }): Promise<number> {
  const settled: { x: number; y: number }[] = []; // time, bytes the sockets had read
  let first = -1; // when the first frame had arrived
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  return new Promise<number>((resolve, reject) => {
    const finish = (end: () => void) => {
      done = true;
      clearInterval(timer);
      src.stop();
      end();
    };
    const sample = () => {
      const now = performance.now();
      const elapsed = now - first;
      if (elapsed >= PROBE.settleMs) settled.push({ x: now, y: src.bytesRead() });
      // A receiver whose event loop stalled through the phase took one or two samples: their slope is no rate
      // (a 3927/0.0 reading under load). It samples on until it has enough, and past maxMs takes the mean.
      const enough = settled.length >= PROBE.minSamples;
      if (elapsed >= PROBE.ms && (enough || elapsed >= PROBE.maxMs)) finish(() => resolve((slopeOrMean(settled, enough) * 8) / 1000)); // bytes per ms to Mbit/s
    };
    src.start(
      () => {
        if (first >= 0 || done) return;
        first = performance.now();
        timer = setInterval(sample, PROBE.sampleMs);
      },
      (err) => !done && finish(() => reject(err)),
    );
  });
}
