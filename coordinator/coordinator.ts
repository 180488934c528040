// The coordinator: lets ranks join, assigns rank ids, wires them into a ring, runs each scheme and collects
// what the ranks measured. It never touches tensors on the data plane.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { fitCheck } from '../shared/accounting/fit.js';
import { decodeControl, encodeMessage, type ControlMessage, type SchemeSummary, type StepMetrics } from '../shared/control/messages.js';
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';
import { writeIndex } from '../shared/io/checkpoint.js';
import { nowMs } from '../shared/accounting/clock.js';
import { modelSpec } from '../shared/training/model.js';
import { closeReason } from '../shared/transport/close-reason.js';
import { BindError } from '../shared/transport/bind-error.js';
import { announcedBytes, limitMessages, socketOf } from '../shared/transport/ws-internals.js';
import { memberMessageCap } from './message-caps.js';
import { Liveness, livenessFor, LIVENESS } from '../shared/transport/liveness.js';
import { joinRefusal } from './admission.js';
import { assignRanks } from './ring-order.js';
import { closeControl, listenControl, plainAddress, type ControlServer } from './control-server.js';
import { RankReports } from './rank-reports.js';
import { settleWorldSize } from './world-size.js';

export interface CoordinatorOptions {
  host: string;
  port: number;
  world: number | 'auto'; // 'auto': settle on however many ranks join (see discover, settleMs)
  minWorld?: number; // run with fewer ranks than expected, down to this many (world-size.ts)
  discover?: string; // with 'auto': a DNS name with one address per rank (compose service); wait until all joined
  settleMs?: number; // with 'auto': no new rank for this long fixes the world size
  config: RunConfig;
  joinTimeoutMs: number;
  maxRankMemory?: number;
  token?: string; // ranks must present it to join (compared in constant time, never logged)
  tls?: { cert: Buffer; key: Buffer }; // serve wss:// instead of ws://
  heartbeatTimeoutMs?: number; // a rank silent this long on a quiet link is lost (the floor of an adaptive limit: liveness.ts)
}

export interface RankInfo {
  rank: number; // in join order until the run starts; then final (see ring-order.ts)
  address: string; // what other ranks dial: --advertise, or where the coordinator saw it connect from
  peerPort: number;
  host: string; // what the ring groups by: its --host-id, or its address
  requested?: number; // the rank id it asked for
  worldSize?: number; // the world size it expects
  hostname: string;
  pid: number;
  from: string; // remote address of the control connection
}

export interface RunResult {
  world: number;
  ranks: RankInfo[];
  summaries: Map<SchemeName, SchemeSummary[]>; // per scheme, indexed by rank
  messages: { largest: number; cap: number }; // the largest control message a rank sent, and the cap it had
}

export type StepListener = (scheme: SchemeName, step: number, ranksDone: number, metrics: StepMetrics) => void;

export class CoordinatorError extends Error {
  override name = 'CoordinatorError';
}

interface Member {
  ws: WebSocket;
  info: RankInfo;
  liveness: Liveness; // heard from: any message, ping, pong or byte
  aborted: CoordinatorError | null; // the rank said why it stops: its words, not its disconnect, are the verdict
  suspect: number | null; // ... and, when a ring link failed, whom it lost
  largestMessage: number; // bytes
}

/** Limits for connections that have not joined (see control-server.ts). */
const JOIN_LIMITS = { joinMessageBytes: 64 << 10, joinTimeoutMs: 5_000, maxWaiting: 64 } as const;
export class Coordinator {
  private server: ControlServer | null = null;
  private readonly members: Member[] = [];
  private phase: 'joining' | 'running' | 'finished' | 'failed' = 'joining';
  private failure: CoordinatorError | null = null;
  private readonly waiters = new Set<{ check: () => boolean; resolve: () => void; reject: (e: Error) => void }>();
  private readonly ready = new Set<number>();
  private readonly done = new Map<SchemeName, SchemeSummary[]>();
  private current: { scheme: SchemeName; step: number } | null = null;
  private readonly stepReports = new RankReports();
  onStep: StepListener = () => undefined;
  onJoin: (info: RankInfo) => void = () => undefined;
  onWorld: (world: number, how: string, short: boolean) => void = () => undefined;
  onCheckpoint: (scheme: SchemeName, step: number, index: string) => void = () => undefined;
  onRefuse: (from: string, why: string) => void = () => undefined;
  onRing: (ranks: RankInfo[]) => void = () => undefined;
  private readonly checkpointReports = new RankReports();
  private readonly checksums = new Map<string, string[]>(); // per scheme:step, each rank's shard SHA-256
  private readonly indexWrites: Promise<void>[] = [];
  private pendingFailure: NodeJS.Timeout | null = null;
  private messageCap = JOIN_LIMITS.joinMessageBytes; // what a member may send in one message (message-caps.ts)

  constructor(private readonly opts: CoordinatorOptions) {}

  async listen(): Promise<number> {
    const { host, port, tls } = this.opts;
    try {
      this.server = await listenControl(
        host,
        port,
        tls,
        JOIN_LIMITS,
        (ws, req) => this.onConnection(ws, req),
        (from, why) => this.onRefuse(from, why),
      );
    } catch (err) {
      throw err instanceof BindError ? err : new CoordinatorError((err as Error).message);
    }
    return this.server.port;
  }

  /** Run every scheme of the config and return what the ranks reported. */
  async run(): Promise<RunResult> {
    const { config } = this.opts;
    const spec = modelSpec(config);
    const world = await this.settleWorld();
    this.phase = 'running';
    if (config.batch % world !== 0) this.failWith(new CoordinatorError(`global batch ${config.batch} does not divide evenly over ${world} ranks`));
    if (this.opts.maxRankMemory !== undefined) {
      const fit = fitCheck(config, spec, world, this.opts.maxRankMemory);
      if (fit.refused.length) this.failWith(new CoordinatorError(fit.message));
    }
    if (this.failure) throw this.failure;
    this.messageCap = memberMessageCap(config, world);
    for (const m of this.members) limitMessages(m.ws, this.messageCap);
    this.seatRanks();
    const runId = randomBytes(8).toString('hex');
    const ringKey = randomBytes(32); // only admitted ranks learn it: their ring peers check it (never logged)
    for (const m of this.members) {
      const prev = this.members[(m.info.rank - 1 + world) % world].info;
      const hostRanks = this.members.filter((o) => o.info.hostname === m.info.hostname).length;
      this.send(m, { type: 'assign', rank: m.info.rank, world, runId, ringKey, prevHost: prev.address, prevPort: prev.peerPort, hostRanks, config });
    }
    await this.until(
      () => this.ready.size === world,
      config.timeoutMs + 10_000,
      () => `ranks ${this.missing(this.ready)} did not wire the ring`,
    );
    for (const scheme of config.schemes) {
      this.current = { scheme, step: 0 };
      this.done.set(scheme, []);
      for (const m of this.members) this.send(m, { type: 'run', scheme });
      const got = this.done.get(scheme)!;
      await this.until(
        () => got.length === world,
        Number.POSITIVE_INFINITY,
        () => '',
      );
      got.sort((a, b) => a.rank - b.rank);
    }
    this.current = null;
    await Promise.all(this.indexWrites);
    if (this.failure) throw this.failure;
    const largest = Math.max(...this.members.map((m) => m.largestMessage));
    return { world, ranks: this.members.map((m) => m.info), summaries: this.done, messages: { largest, cap: this.messageCap } };
  }

  /** How many ranks this run has: the number given, or (auto) what joined once things settled. */
  private async settleWorld(): Promise<number> {
    try {
      const { world, how, short } = await settleWorldSize(
        this.opts,
        () => this.members.length,
        () => this.failure,
      );
      if (how) this.onWorld(world, how, short);
      return world;
    } catch (err) {
      throw err instanceof CoordinatorError ? err : new CoordinatorError((err as Error).message);
    }
  }

  /** Final rank ids: asked-for ids kept, the others grouped by host; the members sorted by them. */
  private seatRanks(): void {
    try {
      const ids = assignRanks(this.members.map((m) => ({ host: m.info.host, requested: m.info.requested, worldSize: m.info.worldSize, who: this.where(m) })));
      this.members.forEach((m, i) => (m.info.rank = ids[i]));
    } catch (err) {
      this.failWith(new CoordinatorError((err as Error).message));
      throw this.failure!;
    }
    this.members.sort((a, b) => a.info.rank - b.info.rank);
    this.onRing(this.members.map((m) => m.info));
  }

  /** Tell every rank the run is over and close. */
  async finish(): Promise<void> {
    this.phase = 'finished';
    for (const m of this.members) this.send(m, { type: 'finish' });
    await this.closeServer(2000);
  }

  /** Stop the run: every rank is told why, and the server closes. */
  async abort(reason: string): Promise<void> {
    if (this.phase === 'finished') return;
    this.failWith(new CoordinatorError(reason));
    await this.closeServer(1000);
  }

  /** Watch a member: pinged, and heard from; one silent past the limit while the run runs is lost (a dead
   *  host or a cut cable sends no FIN). */
  private watch(ws: WebSocket, member: () => Member): Liveness {
    const timing = this.opts.heartbeatTimeoutMs === undefined ? LIVENESS : livenessFor(this.opts.heartbeatTimeoutMs);
    return new Liveness(timing, {
      socket: () => socketOf(ws),
      ping: () => ws.readyState === ws.OPEN && ws.ping(),
      lost: (silent, limit) => {
        if (this.phase !== 'running') return;
        this.failWith(new CoordinatorError(`${this.where(member())} stopped answering heartbeats (silent for ${silent} ms, limit ${limit} ms)`));
        ws.terminate();
      },
    });
  }

  private async closeServer(graceMs: number): Promise<void> {
    for (const m of this.members) m.liveness.stop();
    if (this.pendingFailure) clearTimeout(this.pendingFailure);
    const server = this.server;
    this.server = null;
    if (server) await closeControl(server, graceMs, () => this.members.some((m) => m.ws.readyState === m.ws.OPEN));
  }

  private missing(set: Set<number>): string {
    return this.members
      .filter((m) => !set.has(m.info.rank))
      .map((m) => m.info.rank)
      .join(', ');
  }

  private send(m: Member, msg: ControlMessage): void {
    if (m.ws.readyState === m.ws.OPEN) m.ws.send(encodeMessage(msg));
  }

  /** Wait until `check()` holds, failing on timeout or on any failure of the run. */
  private until(check: () => boolean, timeoutMs: number, why: () => string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = {
        check,
        resolve: () => (clear(), resolve()),
        reject: (e: Error) => (clear(), reject(e)),
      };
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => this.failWith(new CoordinatorError(why())), timeoutMs) : null;
      const clear = () => {
        if (timer) clearTimeout(timer);
        this.waiters.delete(w);
      };
      this.waiters.add(w);
    });
  }

  private progress(): void {
    for (const w of [...this.waiters]) if (w.check()) w.resolve();
  }

  private failWith(err: CoordinatorError): void {
    if (this.failure || this.phase === 'finished') return;
    this.failure = err;
    this.phase = 'failed';
    for (const m of this.members) this.send(m, { type: 'abort', reason: err.message });
    for (const w of [...this.waiters]) w.reject(err);
  }

  /** A rank stopping with a reason, or a broken link it reports: the verdict waits a moment, since a rank
   *  whose neighbour died reports the broken link first and the dead rank's own disconnect names the real
   *  culprit. The first such reason stands. */
  private failSoon(err: CoordinatorError): void {
    if (!this.pendingFailure) this.pendingFailure = setTimeout(() => this.failWith(this.verdict(err)), 250);
  }

  /** Who failed, from what the ranks said: a rank that its ring neighbours lost (silent, or its link cut)
   *  and that gave no reason of its own is the one, whoever spoke first; otherwise the first reason. */
  private verdict(first: CoordinatorError): CoordinatorError {
    const reports = this.members.filter((m) => m.aborted && m.suspect !== null);
    for (const r of reports) {
      const lost = this.members.find((m) => m.info.rank === r.suspect);
      if (lost && !lost.aborted) return new CoordinatorError(`${this.where(lost)} went silent on the ring: ${r.aborted!.message}`);
    }
    return first;
  }

  private where(m: Member): string {
    const at = this.current ? ` during ${this.current.scheme} step ${this.current.step}` : '';
    return `rank ${m.info.rank} (${m.info.hostname}, ${m.info.address}, pid ${m.info.pid})${at}`;
  }

  private onConnection(ws: WebSocket, req: IncomingMessage): void {
    const from = plainAddress(req);
    let member: Member | null = null;
    // Every refusal is told to the operator: who, and why (never what they sent).
    const refuse = (reason: string) => {
      this.onRefuse(from, reason);
      ws.close(1008, closeReason(reason));
    };
    ws.on('message', (data, isBinary) => {
      let msg: ControlMessage;
      try {
        if (!isBinary) throw new Error('text message');
        msg = decodeControl(data as Buffer);
      } catch (err) {
        // Before the run starts a malformed member is only dropped (a stranger's garbage must not end a run
        // that has not begun); once it runs, it fails the run.
        if (member && this.phase === 'running')
          this.failWith(new CoordinatorError(`${this.where(member)} sent a malformed message: ${(err as Error).message}`));
        return refuse(`malformed message: ${(err as Error).message}`);
      }
      if (!member) {
        if (msg.type !== 'join') return refuse('the first message must be a join');
        const why = joinRefusal(msg, from, {
          token: this.opts.token,
          phase: this.phase,
          world: this.opts.world,
          members: this.members.map((m) => m.info),
          model: this.opts.config.model,
        });
        if (why) return refuse(why);
        const info: RankInfo = {
          rank: this.members.length,
          address: msg.advertise ?? from,
          peerPort: msg.peerPort,
          host: msg.host ?? msg.advertise ?? from,
          requested: msg.rankId,
          worldSize: msg.worldSize,
          hostname: msg.hostname,
          pid: msg.pid,
          from,
        };
        const m: Member = { ws, info, liveness: this.watch(ws, () => m), aborted: null, suspect: null, largestMessage: 0 };
        member = m;
        m.liveness.start();
        // Joined: no longer a stranger on a deadline. Its messages stay join-sized until the run starts and
        // its largest real message is known (run).
        this.server?.waiting.delete(req.socket);
        ws.on('pong', () => m.liveness.heard());
        ws.on('ping', () => m.liveness.heard());
        this.members.push(member);
        this.onJoin(info);
        this.progress();
        return;
      }
      member.liveness.heard();
      member.largestMessage = Math.max(member.largestMessage, (data as Buffer).byteLength);
      this.onMessage(member, msg);
    });
    ws.on('close', (code, reason) => {
      if (!member) return;
      member.liveness.stop();
      if (this.phase === 'joining') {
        // Left before the run started: forget it and renumber, so nobody waits for a ghost.
        this.members.splice(this.members.indexOf(member), 1);
        this.members.forEach((m, i) => (m.info.rank = i));
        return;
      }
      if (this.phase !== 'running') return;
      // A rank that said why it stops closes right after; its reason stands, on the same footing as any
      // other rank's (see failSoon). A rank that vanished without a word is the culprit at once.
      if (member.aborted) this.failSoon(member.aborted);
      else this.failWith(new CoordinatorError(`${this.where(member)} disconnected (${code}${reason.length ? ` ${reason.toString()}` : ''})`));
    });
    // 'close' follows and says what matters for a member, except a message over its cap, which ws refuses
    // at the frame header: that is the verdict, with its size. A stranger's error is reported.
    ws.on('error', (err) => {
      if (!member) return this.onRefuse(from, err.message);
      if ((err as { code?: string }).code !== 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return;
      const size = announcedBytes(ws);
      this.failWith(
        new CoordinatorError(
          `${this.where(member)} sent a message of ${size ?? 'more than the limit of'} bytes, over the limit of ${this.messageCap} bytes a rank may send in this run (refused unread)`,
        ),
      );
    });
  }

  private onMessage(m: Member, msg: ControlMessage): void {
    switch (msg.type) {
      case 'ready':
        this.ready.add(m.info.rank);
        break;
      case 'clock':
        return this.send(m, { type: 'clock', t0: msg.t0, t1: nowMs() });
      case 'step': {
        if (!this.current || msg.scheme !== this.current.scheme)
          return this.failWith(new CoordinatorError(`${this.where(m)} reported a step of ${msg.scheme} out of turn`));
        const n = this.stepReports.add(`${msg.scheme}:${msg.metrics.step}`, this.members.length);
        this.current.step = Math.max(this.current.step, msg.metrics.step);
        this.onStep(msg.scheme, msg.metrics.step, n, msg.metrics);
        break;
      }
      case 'done': {
        const s = msg.summary;
        if (!this.current || s.scheme !== this.current.scheme || s.rank !== m.info.rank)
          return this.failWith(new CoordinatorError(`${this.where(m)} sent an unexpected summary`));
        this.done.get(s.scheme)!.push(s);
        break;
      }
      case 'checkpoint': {
        const c = this.opts.config.checkpoint;
        if (!c) return this.failWith(new CoordinatorError(`${this.where(m)} wrote a checkpoint nobody asked for`));
        const key = `${msg.scheme}:${msg.step}`;
        const sums = this.checksums.get(key) ?? [];
        sums[m.info.rank] = msg.sha256;
        this.checksums.set(key, sums);
        const n = this.checkpointReports.add(key, this.members.length);
        // The index goes last: only when every rank's shard is on disk does the checkpoint exist.
        if (n === this.members.length) {
          this.checksums.delete(key);
          this.indexWrites.push(
            writeIndex(c.dir, this.opts.config, this.members.length, msg.scheme, msg.step, sums).then(
              (path) => this.onCheckpoint(msg.scheme, msg.step, path),
              (err) => this.failWith(new CoordinatorError(`cannot write the checkpoint index: ${(err as Error).message}`)),
            ),
          );
        }
        break;
      }
      case 'abort': {
        // A rank whose neighbour died reports a broken link; the dead rank's own disconnect names the real
        // culprit, so let it arrive first if it is about to.
        m.aborted = new CoordinatorError(`${this.where(m)} failed: ${msg.reason}`);
        m.suspect = msg.suspect ?? null;
        this.failSoon(m.aborted);
        return;
      }
      default:
        return this.failWith(new CoordinatorError(`${this.where(m)} sent an unexpected ${msg.type} message`));
    }
    this.progress();
  }
}
