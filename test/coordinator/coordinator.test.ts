// The coordinator's state machine driven directly, in this process: real WebSocket clients play the ranks
// and send exactly the messages a rank would (or would not), so each transition is checked on its own.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { joinRefusal, type AdmissionState, type JoinMessage } from '../../coordinator/admission.js';
import { Coordinator } from '../../coordinator/coordinator.js';
import type { CoordinatorOptions } from '../../coordinator/run-types.js';
import { RankReports } from '../../coordinator/rank-reports.js';
import { decodeControl, encodeMessage, PROTOCOL_VERSION, type ControlMessage, type RankSummary, type SchemeSummary } from '../../shared/control/messages.js';
import { smallConfig } from '../helpers/config.js';

const config = smallConfig();
const join: JoinMessage = { type: 'join', version: PROTOCOL_VERSION, peerPort: 9, hostname: 'h', pid: 1 };

describe('admission', () => {
  const state: AdmissionState = { phase: 'joining', world: 2, members: [], model: '4,4', tls: false };
  it.each([
    ['a good join', join, state, null],
    ['no token where one is set', join, { ...state, token: 't' }, 'refused: missing or wrong join token'],
    ['the right token', { ...join, token: 't' }, { ...state, token: 't' }, null],
    ['a plain ring into a TLS run', join, { ...state, tls: true }, /this run encrypts its links .*--tls-cert and --tls-key/],
    ['a TLS ring into a plain run', { ...join, ringTls: true }, state, /this rank has --tls-cert but the coordinator serves plain ws:\/\//],
    ['TLS on both sides', { ...join, ringTls: true }, { ...state, tls: true }, null],
    ['another protocol version', { ...join, version: 99 }, state, /protocol version 99 is not 3/],
    ['a run already started', join, { ...state, phase: 'running' }, 'refused: the run has already started'],
    [
      'a full run',
      join,
      {
        ...state,
        members: [
          { hostname: 'a', pid: 1, from: 'x' },
          { hostname: 'b', pid: 1, from: 'x' },
        ],
      },
      'refused: the run is full (2 ranks)',
    ],
    ['the same process twice', join, { ...state, members: [{ hostname: 'h', pid: 1, from: '1.2.3.4' }] }, /already joined/],
    ['another model', { ...join, model: '4,8' }, state, 'refused: this rank expects model 4,8, the run trains 4,4'],
  ] as const)('%s', (_, msg, s, expected) => {
    const why = joinRefusal(msg as JoinMessage, '1.2.3.4', s as AdmissionState);
    if (expected === null || typeof expected === 'string') expect(why).toBe(expected);
    else expect(why).toMatch(expected);
  });

  it('reports of one event are counted until every rank has sent one', () => {
    const r = new RankReports();
    expect([r.add('dp:0', 3), r.add('dp:0', 3), r.add('dp:1', 3), r.add('dp:0', 3), r.add('dp:0', 3)]).toEqual([1, 2, 1, 3, 1]);
  });
});

/** A client that speaks the control protocol like a rank, message by message. */
class FakeRank {
  readonly inbox: ControlMessage[] = [];
  closed: { code: number; reason: string } | null = null;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => this.inbox.push(decodeControl(d as Buffer)));
    ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }
  static open(port: number): Promise<FakeRank> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}`);
      ws.once('open', () => resolve(new FakeRank(ws)));
      ws.once('error', reject);
    });
  }
  send(m: ControlMessage): void {
    this.ws.send(encodeMessage(m));
  }
  async next(type: ControlMessage['type']): Promise<ControlMessage> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const at = this.inbox.findIndex((m) => m.type === type);
      if (at >= 0) return this.inbox.splice(at, 1)[0];
      if (Date.now() > deadline) throw new Error(`no ${type} message within 5 s (got ${this.inbox.map((m) => m.type).join(', ') || 'nothing'})`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

const summary = (rank: number, weightBytes = rank === 0 ? 80 : 0): RankSummary => ({
  scheme: 'dp',
  rank,
  params: 20,
  paddedParams: 20,
  steps: [],
  memory: { resident: {}, peak: 0, peakBands: {}, peakPerBand: {}, peakAll: 0, peakAllBands: {}, processBefore: 0, processPeak: 0 },
  socket: { sent: 0, recv: 0 },
  clock: { offsetMs: 0, uncertaintyMs: 0.1 },
  weightBytes,
});
/** DP's final weights at model 4,4 (20 parameters), as rank 0 sends them: two pieces, then its summary. */
const weights = Uint8Array.from({ length: 80 }, (_, i) => i);
/** Bytes [offset, end) of them as rank `rank` would send them, announcing `total`. */
const piece = (rank: number, offset: number, end: number, total = 80): ControlMessage => ({
  type: 'weights',
  scheme: 'dp',
  rank,
  offset,
  total,
  bytes: weights.subarray(offset, end),
});

let coord: Coordinator | null = null;
const ranks: FakeRank[] = [];
afterEach(async () => {
  for (const r of ranks.splice(0)) r.ws.terminate();
  await coord?.abort('test over');
  coord = null;
});

async function start(world = 2, opts: Partial<CoordinatorOptions> = {}): Promise<{ run: Promise<unknown>; ranks: FakeRank[] }> {
  coord = new Coordinator({ host: '127.0.0.1', port: 0, world, config, joinTimeoutMs: 5000, ...opts });
  const port = await coord.listen();
  const run = coord.run();
  run.catch(() => undefined);
  for (let r = 0; r < world; r++) {
    const rank = await FakeRank.open(port);
    rank.send({ ...join, pid: 100 + r });
    ranks.push(rank);
  }
  return { run, ranks: [...ranks] };
}

describe('the coordinator, message by message', () => {
  it('join -> assign (a ring: each rank learns its predecessor) -> ready -> run -> done -> the result', async () => {
    const { run, ranks: rs } = await start(2);
    const assigns = await Promise.all(rs.map((r) => r.next('assign')));
    expect(assigns.map((a) => a.type === 'assign' && [a.rank, a.world, a.prevPort])).toEqual([
      [0, 2, 9],
      [1, 2, 9],
    ]);
    for (const [i, r] of rs.entries()) r.send({ type: 'ready', rank: i });
    for (const r of rs) expect(await r.next('run')).toEqual({ type: 'run', scheme: 'dp' });
    for (const m of [piece(0, 0, 48), piece(0, 48, 80)]) rs[0].send(m);
    for (const [i, r] of rs.entries()) r.send({ type: 'done', summary: summary(i) });
    const result = (await run) as { world: number; summaries: Map<string, SchemeSummary[]> };
    expect(result.world).toBe(2);
    expect(result.summaries.get('dp')!.map((s) => s.rank)).toEqual([0, 1]);
    // DP's replicas are alike: only rank 0 sends its weights, in pieces, put together in order.
    expect(result.summaries.get('dp')!.map((s) => Array.from(s.master))).toEqual([Array.from(weights), []]);
  });

  it.each([
    ['a piece out of order', [piece(0, 48, 80)], /rank 0 .* sent weights: a piece at byte 48, expected the one at 0/],
    ['a piece announcing 1 TB', [piece(0, 0, 48, 2 ** 40)], /rank 0 .* sent weights: 1099511627776 bytes in all, where this run needs 80 from it/],
    [
      'weights from a replica that need not send them',
      [piece(0, 0, 80), piece(1, 0, 48)],
      /rank 1 .* sent weights: 80 bytes in all, where this run needs 0 from it/,
    ],
    ['a summary before all its weights', [piece(0, 0, 48), { type: 'done', summary: summary(0) }], /rank 0 .* sent a summary after 48 of 80 bytes of weights/],
    [
      'a summary announcing weights a replica need not send',
      [{ type: 'done', summary: summary(1, 80) }],
      /rank 1 .* sent a summary with 80 bytes of weights, where this run needs 0 from it/,
    ],
  ] as [string, ControlMessage[], RegExp][])('weights: %s fails the run, naming the rank and the bytes', async (_, messages, expected) => {
    const { run, ranks: rs } = await start(2);
    await Promise.all(rs.map((r) => r.next('assign')));
    for (const [i, r] of rs.entries()) r.send({ type: 'ready', rank: i });
    for (const r of rs) await r.next('run');
    for (const m of messages) rs['rank' in m ? m.rank : m.type === 'done' ? m.summary.rank : 0].send(m);
    await expect(run).rejects.toThrow(expected);
  });

  it('a rank that leaves before the run starts is forgotten and the others are renumbered', async () => {
    coord = new Coordinator({ host: '127.0.0.1', port: 0, world: 2, config, joinTimeoutMs: 5000 });
    const port = await coord.listen();
    const run = coord.run();
    run.catch(() => undefined);
    const first = await FakeRank.open(port);
    first.send({ ...join, pid: 1 });
    await new Promise((r) => setTimeout(r, 100));
    first.ws.close();
    const a = await FakeRank.open(port);
    const b = await FakeRank.open(port);
    ranks.push(a, b);
    a.send({ ...join, pid: 2 });
    await new Promise((r) => setTimeout(r, 50));
    b.send({ ...join, pid: 3 });
    const assigned = await Promise.all([a.next('assign'), b.next('assign')]);
    expect(assigned.map((m) => m.type === 'assign' && m.rank)).toEqual([0, 1]);
  });

  it('a step of another scheme than the one running fails the run, naming the rank', async () => {
    const { run, ranks: rs } = await start(2);
    await Promise.all(rs.map((r) => r.next('assign')));
    for (const [i, r] of rs.entries()) r.send({ type: 'ready', rank: i });
    await rs[0].next('run');
    rs[1].send({
      type: 'step',
      rank: 1,
      scheme: 'zero3',
      metrics: {
        step: 0,
        loss: 1,
        stepMs: 1,
        computeMs: 1,
        commMs: 0,
        exposedMs: 0,
        startAt: 0,
        sent: { payload: 0, envelope: 0, frame: 0 },
        recv: { payload: 0, envelope: 0, frame: 0 },
        collectives: [],
        units: [],
        wire: { wireMs: 0, bytes: 0, hiddenMs: 0, hiddenBytes: 0 },
        bandPeaks: {},
      },
    });
    await expect(run).rejects.toThrow(/rank 1 \(h, 127\.0\.0\.1, pid 101\) during dp step 0 reported a step of zero3 out of turn/);
    const abort = await rs[0].next('abort');
    expect(abort.type === 'abort' && abort.reason).toMatch(/out of turn/);
  });

  it('a malformed message from a member fails the run with the field named; a summary of another rank too', async () => {
    const { run, ranks: rs } = await start(2);
    await Promise.all(rs.map((r) => r.next('assign')));
    rs[0].ws.send(encodeMessage({ type: 'ready', rank: -1 } as ControlMessage));
    await expect(run).rejects.toThrow(/rank 0 .* sent a malformed message: message: field "rank": expected >=0, got -1/);
  });

  it('a member that disconnects mid-run fails it, named with its code', async () => {
    const { run, ranks: rs } = await start(2);
    await Promise.all(rs.map((r) => r.next('assign')));
    rs[1].ws.close(4000, 'gone');
    await expect(run).rejects.toThrow(/rank 1 \(h, 127\.0\.0\.1, pid 101\) disconnected \(4000 gone\)/);
  });
});
