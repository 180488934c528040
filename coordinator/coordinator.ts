// The coordinator: lets ranks join, assigns rank ids, wires them into a ring, runs each scheme and collects
// what the ranks measured. It never touches tensors on the data plane.
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { WebSocketServer, type WebSocket } from 'ws';
import { MlpSpec } from '../shared/training/mlp.js';
import { fitCheck } from '../shared/accounting/fit.js';
import { sameSecret } from '../shared/transport/auth.js';
import { writeIndex } from '../shared/io/checkpoint.js';
import { closeReason } from '../shared/transport/close-reason.js';
import { decodeControl, encodeMessage, HEARTBEAT, PROTOCOL_VERSION, type ControlMessage, type SchemeSummary, type StepMetrics } from '../shared/control/messages.js';
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';

export interface CoordinatorOptions {
  host: string;
  port: number;
  world: number | 'auto'; // 'auto': settle on however many ranks join (see discover, settleMs)
  discover?: string; // with 'auto': a DNS name with one address per rank (compose service); wait until all joined
  settleMs?: number; // with 'auto': no new rank for this long fixes the world size
  config: RunConfig;
  joinTimeoutMs: number;
  maxRankMemory?: number;
  token?: string; // ranks must present it to join (compared in constant time, never logged)
  tls?: { cert: Buffer; key: Buffer }; // serve wss:// instead of ws://
  heartbeatMs?: number; // ping every rank this often ...
  heartbeatTimeoutMs?: number; // ... and declare it lost when it has been silent this long
}

export interface RankInfo {
  rank: number;
  address: string; // what other ranks dial: --advertise, or where the coordinator saw it connect from
  peerPort: number;
  hostname: string;
  pid: number;
  from: string; // remote address of the control connection
}

export interface RunResult {
  world: number;
  ranks: RankInfo[];
  summaries: Map<SchemeName, SchemeSummary[]>; // per scheme, indexed by rank
}

export type StepListener = (scheme: SchemeName, step: number, ranksDone: number, metrics: StepMetrics) => void;

export class CoordinatorError extends Error {
  override name = 'CoordinatorError';
}

interface Member {
  ws: WebSocket;
  info: RankInfo;
  lastHeard: number; // any message or pong
}

const JOIN_MESSAGE_TIMEOUT_MS = 10_000;

function plainAddress(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
}

export class Coordinator {
  private server: WebSocketServer | null = null;
  private https: HttpsServer | null = null;
  private readonly members: Member[] = [];
  private phase: 'joining' | 'running' | 'finished' | 'failed' = 'joining';
  private failure: CoordinatorError | null = null;
  private readonly waiters = new Set<{ check: () => boolean; resolve: () => void; reject: (e: Error) => void }>();
  private readonly ready = new Set<number>();
  private readonly done = new Map<SchemeName, SchemeSummary[]>();
  private current: { scheme: SchemeName; step: number } | null = null;
  private readonly stepCounts = new Map<string, number>();
  onStep: StepListener = () => undefined;
  onJoin: (info: RankInfo) => void = () => undefined;
  onWorld: (world: number, how: string) => void = () => undefined;
  onCheckpoint: (scheme: SchemeName, step: number, index: string) => void = () => undefined;
  private readonly checkpointReports = new Map<string, number>();
  private readonly indexWrites: Promise<void>[] = [];
  private heartbeat: NodeJS.Timeout | null = null;
  private pendingFailure: NodeJS.Timeout | null = null;

  constructor(private readonly opts: CoordinatorOptions) {}

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => reject(new CoordinatorError(`cannot listen on ${this.opts.host}:${this.opts.port}: ${err.message}`));
      // With a certificate the control plane is wss://; the WebSocket server then rides on an HTTPS server.
      const https = this.opts.tls ? createHttpsServer({ cert: this.opts.tls.cert, key: this.opts.tls.key }) : null;
      const options = { perMessageDeflate: false, maxPayload: 1 << 30 };
      const server = https ? new WebSocketServer({ server: https, ...options }) : new WebSocketServer({ host: this.opts.host, port: this.opts.port, ...options });
      const ready = () => {
        this.server = server;
        this.https = https;
        server.on('connection', (ws, req) => this.onConnection(ws, req));
        this.heartbeat = setInterval(() => this.checkHeartbeats(), this.opts.heartbeatMs ?? HEARTBEAT.intervalMs);
        resolve(((https ?? server).address() as { port: number }).port);
      };
      if (https) {
        https.once('error', fail);
        https.listen(this.opts.port, this.opts.host, ready);
      } else {
        server.once('error', fail);
        server.once('listening', ready);
      }
    });
  }

  /** Run every scheme of the config and return what the ranks reported. */
  async run(): Promise<RunResult> {
    const { config } = this.opts;
    const spec = new MlpSpec(config.model);
    const world = await this.settleWorld();
    this.phase = 'running';
    if (config.batch % world !== 0) this.failWith(new CoordinatorError(`global batch ${config.batch} does not divide evenly over ${world} ranks`));
    if (this.opts.maxRankMemory !== undefined) {
      const fit = fitCheck(config, spec, world, this.opts.maxRankMemory);
      if (fit.refused.length) this.failWith(new CoordinatorError(fit.message));
    }
    if (this.failure) throw this.failure;
    const runId = randomBytes(8).toString('hex');
    const ringKey = randomBytes(32); // only admitted ranks learn it: their ring peers check it (never logged)
    for (const m of this.members) {
      const prev = this.members[(m.info.rank - 1 + world) % world].info;
      this.send(m, { type: 'assign', rank: m.info.rank, world, runId, ringKey, prevHost: prev.address, prevPort: prev.peerPort, config });
    }
    await this.until(() => this.ready.size === world, config.timeoutMs + 10_000, () => `ranks ${this.missing(this.ready)} did not wire the ring`);
    for (const scheme of config.schemes) {
      this.current = { scheme, step: 0 };
      this.done.set(scheme, []);
      for (const m of this.members) this.send(m, { type: 'run', scheme });
      const got = this.done.get(scheme)!;
      await this.until(() => got.length === world, Number.POSITIVE_INFINITY, () => '');
      got.sort((a, b) => a.rank - b.rank);
    }
    this.current = null;
    await Promise.all(this.indexWrites);
    if (this.failure) throw this.failure;
    return { world, ranks: this.members.map((m) => m.info), summaries: this.done };
  }

  /** How many ranks this run has: the number given, or (auto) what joined once things settled. */
  private async settleWorld(): Promise<number> {
    const timeout = this.opts.joinTimeoutMs;
    if (this.opts.world !== 'auto') {
      const world = this.opts.world;
      await this.until(() => this.members.length === world, timeout, () => `only ${this.members.length} of ${world} ranks joined within ${timeout} ms`);
      return world;
    }
    const settle = this.opts.settleMs ?? 3000;
    const name = this.opts.discover;
    const deadline = Date.now() + timeout;
    let seen = -1;
    let since = Date.now();
    let expected = 0;
    for (;;) {
      if (this.failure) throw this.failure;
      const joined = this.members.length;
      if (name) expected = await lookup(name, { all: true }).then((a) => a.length, () => 0);
      if (joined !== seen) {
        seen = joined;
        since = Date.now();
      }
      const complete = joined > 0 && (!name || joined === expected);
      if (complete && Date.now() - since >= settle) break;
      if (Date.now() > deadline) {
        throw new CoordinatorError(name ? `${joined} ranks joined within ${timeout} ms, but ${name} resolves to ${expected} addresses` : `no rank joined within ${timeout} ms`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const world = this.members.length;
    this.onWorld(world, name ? `DNS name "${name}" resolves to ${expected} addresses, all joined, none new for ${settle} ms` : `no new rank for ${settle} ms`);
    return world;
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

  /** Ping every rank; one that has been silent too long is lost (a dead host or a cut cable sends no FIN). */
  private checkHeartbeats(): void {
    const limit = this.opts.heartbeatTimeoutMs ?? HEARTBEAT.timeoutMs;
    const now = Date.now();
    for (const m of this.members) {
      if (m.ws.readyState !== m.ws.OPEN) continue;
      if (this.phase === 'running' && now - m.lastHeard > limit) {
        this.failWith(new CoordinatorError(`${this.where(m)} stopped answering heartbeats (silent for ${now - m.lastHeard} ms)`));
        m.ws.terminate();
        continue;
      }
      m.ws.ping();
    }
  }

  private async closeServer(graceMs: number): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.pendingFailure) clearTimeout(this.pendingFailure);
    const server = this.server;
    if (!server) return;
    this.server = null;
    // Give ranks a moment to close their side cleanly, then cut whatever is left.
    const deadline = Date.now() + graceMs;
    while (this.members.some((m) => m.ws.readyState === m.ws.OPEN) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const c of server.clients) c.terminate();
    await new Promise<void>((r) => server.close(() => r()));
    if (this.https) await new Promise<void>((r) => this.https!.close(() => r()));
  }

  private missing(set: Set<number>): string {
    return this.members.filter((m) => !set.has(m.info.rank)).map((m) => m.info.rank).join(', ');
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

  private where(m: Member): string {
    const at = this.current ? ` during ${this.current.scheme} step ${this.current.step}` : '';
    return `rank ${m.info.rank} (${m.info.hostname}, ${m.info.address}, pid ${m.info.pid})${at}`;
  }

  private onConnection(ws: WebSocket, req: IncomingMessage): void {
    const from = plainAddress(req);
    let member: Member | null = null;
    const refuse = (reason: string) => ws.close(1008, closeReason(reason));
    const joinTimer = setTimeout(() => refuse('no join message'), JOIN_MESSAGE_TIMEOUT_MS);
    ws.on('message', (data, isBinary) => {
      let msg: ControlMessage;
      try {
        if (!isBinary) throw new Error('text message');
        msg = decodeControl(data as Buffer);
      } catch (err) {
        if (member) this.failWith(new CoordinatorError(`${this.where(member)} sent a malformed message: ${(err as Error).message}`));
        return refuse(`malformed message: ${(err as Error).message}`);
      }
      if (!member) {
        clearTimeout(joinTimer);
        if (msg.type !== 'join') return refuse('the first message must be a join');
        const why = this.joinRefusal(msg, from);
        if (why) return refuse(why);
        const info: RankInfo = { rank: this.members.length, address: msg.advertise ?? from, peerPort: msg.peerPort, hostname: msg.hostname, pid: msg.pid, from };
        member = { ws, info, lastHeard: Date.now() };
        ws.on('pong', () => (member!.lastHeard = Date.now()));
        this.members.push(member);
        this.onJoin(info);
        this.progress();
        return;
      }
      member.lastHeard = Date.now();
      this.onMessage(member, msg);
    });
    ws.on('close', (code, reason) => {
      clearTimeout(joinTimer);
      if (!member) return;
      if (this.phase === 'joining') {
        // Left before the run started: forget it and renumber, so nobody waits for a ghost.
        this.members.splice(this.members.indexOf(member), 1);
        this.members.forEach((m, i) => (m.info.rank = i));
        return;
      }
      if (this.phase === 'running') this.failWith(new CoordinatorError(`${this.where(member)} disconnected (${code}${reason.length ? ` ${reason.toString()}` : ''})`));
    });
    ws.on('error', () => undefined); // 'close' follows and says what matters
  }

  /** Why a join is refused, or null. The reason goes back to the rank as the close reason. */
  private joinRefusal(msg: Extract<ControlMessage, { type: 'join' }>, from: string): string | null {
    if (this.opts.token !== undefined && !sameSecret(msg.token ?? '', this.opts.token)) return 'refused: missing or wrong join token';
    if (msg.version !== PROTOCOL_VERSION) return `refused: protocol version ${msg.version} is not ${PROTOCOL_VERSION}; run the same zerowire version everywhere`;
    if (this.phase !== 'joining') return 'refused: the run has already started';
    if (this.opts.world !== 'auto' && this.members.length >= this.opts.world) return `refused: the run is full (${this.opts.world} ranks)`;
    if (this.members.some((m) => m.info.hostname === msg.hostname && m.info.pid === msg.pid && m.info.from === from)) return `refused: this process (${msg.hostname} pid ${msg.pid}) has already joined`;
    const model = this.opts.config.model.join(',');
    if (msg.model && msg.model.join(',') !== model) return `refused: this rank expects model ${msg.model.join(',')}, the run trains ${model}`;
    return null;
  }

  private onMessage(m: Member, msg: ControlMessage): void {
    switch (msg.type) {
      case 'ready':
        this.ready.add(m.info.rank);
        break;
      case 'step': {
        if (!this.current || msg.scheme !== this.current.scheme) return this.failWith(new CoordinatorError(`${this.where(m)} reported a step of ${msg.scheme} out of turn`));
        const key = `${msg.scheme}:${msg.metrics.step}`;
        const n = (this.stepCounts.get(key) ?? 0) + 1;
        if (n >= this.members.length) this.stepCounts.delete(key);
        else this.stepCounts.set(key, n);
        this.current.step = Math.max(this.current.step, msg.metrics.step);
        this.onStep(msg.scheme, msg.metrics.step, n, msg.metrics);
        break;
      }
      case 'done': {
        const s = msg.summary;
        if (!this.current || s.scheme !== this.current.scheme || s.rank !== m.info.rank) return this.failWith(new CoordinatorError(`${this.where(m)} sent an unexpected summary`));
        this.done.get(s.scheme)!.push(s);
        break;
      }
      case 'checkpoint': {
        const c = this.opts.config.checkpoint;
        if (!c) return this.failWith(new CoordinatorError(`${this.where(m)} wrote a checkpoint nobody asked for`));
        const key = `${msg.scheme}:${msg.step}`;
        const n = (this.checkpointReports.get(key) ?? 0) + 1;
        if (n >= this.members.length) this.checkpointReports.delete(key);
        else this.checkpointReports.set(key, n);
        // The index goes last: only when every rank's shard is on disk does the checkpoint exist.
        if (n === this.members.length) {
          this.indexWrites.push(
            writeIndex(c.dir, this.opts.config, this.members.length, msg.scheme, msg.step).then(
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
        const err = new CoordinatorError(`${this.where(m)} failed: ${msg.reason}`);
        if (!this.pendingFailure) this.pendingFailure = setTimeout(() => this.failWith(err), 250);
        return;
      }
      default:
        return this.failWith(new CoordinatorError(`${this.where(m)} sent an unexpected ${msg.type} message`));
    }
    this.progress();
  }
}
