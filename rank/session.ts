// One rank's life: join the coordinator, wire the ring, train each scheme it is told to run, report, leave.
import { availableParallelism, hostname } from 'node:os';
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import { Collectives } from '../shared/collectives/collectives.js';
import type { TrainingData } from '../shared/training/data.js';
import { fitCheck } from '../shared/accounting/fit.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { decodeControl, encodeMessage, PROTOCOL_VERSION, type ControlMessage } from '../shared/control/messages.js';
import { resolveCompute, type ComputeMode, type SchemeName } from '../shared/control/run-config.js';
import { PeerListener, wireRing, type Ring } from '../shared/transport/ring.js';
import type { LinkTls } from '../shared/transport/link-tls.js';
import { preflight } from './preflight.js';
import { wireHybridRings, type HybridRings } from './hybrid-rings.js';
import { estimateOffset, nowMs, type ClockEstimate } from '../shared/accounting/clock.js';
import { checkWritableDir } from '../shared/io/writable.js';
import { LinkError } from '../shared/transport/channel.js';
import { Liveness, LIVENESS, livenessFor, type LivenessTiming } from '../shared/transport/liveness.js';
import { socketOf } from '../shared/transport/ws-internals.js';
import { logKernels } from './kernels-log.js';
import { runScheme } from './scheme-run.js';
import { sendSummary } from './weights-upload.js';
import { rankCompute, rankData } from './compute-choice.js';

export interface RankOptions {
  coordinator: string; // ws://host:port
  advertise?: string;
  peerHost: string;
  peerPort: number;
  connectTimeoutMs: number;
  maxRankMemory?: number; // bytes; refuse schemes whose peak would not fit
  iface?: string; // network interface whose kernel counters to report ('auto' = the one the ring uses)
  token?: string; // join token, if the coordinator requires one
  model?: number[]; // join only a run of this model
  heartbeatTimeoutMs?: number; // coordinator or ring peer silent this long on a quiet link: lost (the floor of an adaptive limit)
  straggleMs?: number; // a straggler on purpose: idle this long before every step (what skew costs the others)
  tlsCa?: Buffer; // trust this CA (or self-signed certificate) for a wss:// coordinator
  tls?: LinkTls; // serve the ring port over TLS and dial peers over TLS (the coordinator then serves wss:// too)
  rankId?: number; // ask for this rank id (RANK, JOB_COMPLETION_INDEX, --rank-id)
  worldSize?: number; // expect this world size (WORLD_SIZE)
  hostId?: string; // this rank's host for ring grouping (default: the coordinator uses its address)
}

class RankError extends Error {
  override name = 'RankError';
}

export class RankSession {
  private ws: WebSocket | null = null;
  private listener: PeerListener | null = null;
  private ring: Ring | null = null;
  private coll: Collectives | null = null;
  private rank = -1;
  private plan: RunPlan | null = null; // the run, resolved once when assigned
  private data: TrainingData | null = null;
  private queue: Promise<void> = Promise.resolve();
  private finished = false;
  private closing = false;
  private dialing: WebSocket | null = null;
  private wakeDialler: (() => void) | null = null;
  private threads = 1; // computing this rank's products (--threads, resolved when assigned)
  private computeMode: ComputeMode = 'inline'; // --compute, resolved when assigned
  private hybrid: HybridRings | null = null; // hsdp's sub-rings
  private clock: ClockEstimate = { offsetMs: 0, uncertaintyMs: Number.POSITIVE_INFINITY };
  private clockReply: ((t0: number, t1: number, t2: number) => void) | null = null;
  private watchdog: Liveness | null = null;

  constructor(
    private readonly opts: RankOptions,
    private readonly log: Logger,
  ) {}

  private closeRings(): void {
    for (const r of [this.ring, ...(this.hybrid?.rings ?? [])]) r?.close();
  }

  /** How silence is judged on every connection of this rank (liveness.ts). */
  private get liveness(): LivenessTiming {
    return this.opts.heartbeatTimeoutMs === undefined ? LIVENESS : livenessFor(this.opts.heartbeatTimeoutMs);
  }

  /** Resolves when the coordinator says the run is over; rejects on any failure. */
  async run(): Promise<void> {
    this.listener = await PeerListener.open(this.opts.peerPort, this.opts.peerHost, this.opts.tls);
    this.log.debug({ peerPort: this.listener.port }, 'listening for peers');
    const ws = await this.connect();
    this.ws = ws;
    const { advertise, token, model, rankId, worldSize, hostId } = this.opts;
    ws.send(
      encodeMessage({
        type: 'join',
        version: PROTOCOL_VERSION,
        peerPort: this.listener.port,
        hostname: hostname(),
        pid: process.pid,
        ...(advertise ? { advertise } : {}),
        ...(token !== undefined ? { token } : {}),
        ...(model ? { model } : {}),
        ...(rankId !== undefined ? { rankId } : {}),
        ...(worldSize !== undefined ? { worldSize } : {}),
        ...(hostId ? { host: hostId } : {}),
        ...(this.opts.tls ? { ringTls: true } : {}),
      }),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        const fail = (err: Error) => {
          this.closeRings(); // fails any collective still waiting, so the rank stops at once
          reject(err);
        };
        // The coordinator and this rank ping each other; silence means it (or the link to it) is gone.
        const watchdog = (this.watchdog = new Liveness(this.liveness, {
          socket: () => socketOf(ws),
          ping: () => ws.readyState === ws.OPEN && ws.ping(),
          lost: (silent, limit) => fail(new RankError(`coordinator silent for ${silent} ms (limit ${limit} ms)`)),
        }).start());
        ws.on('ping', () => watchdog.heard());
        ws.on('pong', () => watchdog.heard());
        ws.on('message', (data) => {
          watchdog.heard();
          let msg: ControlMessage;
          try {
            msg = decodeControl(data as Buffer);
          } catch (err) {
            return fail(new RankError(`bad message from coordinator: ${(err as Error).message}`));
          }
          // An abort overtakes whatever is running; everything else is handled strictly in order.
          if (msg.type === 'abort') return fail(new RankError(`run aborted by the coordinator: ${msg.reason}`));
          // Clock replies are awaited by a handler already running: they must not queue behind it.
          if (msg.type === 'clock') return this.clockReply?.(msg.t0, msg.t1 ?? NaN, nowMs());
          this.queue = this.queue.then(() => this.handle(msg)).then(() => (this.finished ? resolve() : undefined), fail);
        });
        ws.on('close', (code, reason) => {
          if (!this.finished) fail(new RankError(`coordinator connection closed (${code}${reason.length ? `: ${reason.toString()}` : ''})`));
        });
        ws.on('error', (err) => fail(new RankError(`coordinator connection: ${err.message}`)));
      });
    } catch (err) {
      // Tell the coordinator why, if it can still hear us.
      if (ws.readyState === ws.OPEN) {
        const suspect = err instanceof LinkError ? { suspect: err.peerRank } : {};
        ws.send(encodeMessage({ type: 'abort', reason: `rank ${this.rank}: ${(err as Error).message}`, ...suspect }));
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    // Also while still dialling: the attempt in flight is cut and the retry loop stops at once.
    this.closing = true;
    this.wakeDialler?.();
    this.dialing?.terminate();
    this.watchdog?.stop();
    this.closeRings();
    await this.listener?.close();
    if (this.ws && this.ws.readyState === this.ws.OPEN) this.ws.close(1000, 'bye');
  }

  /** Dial the coordinator, retrying until it is up (containers start in any order) or the timeout passes. */
  private async connect(): Promise<WebSocket> {
    const deadline = Date.now() + this.opts.connectTimeoutMs;
    let told = false;
    for (;;) {
      if (this.closing) throw new RankError(`stopped before reaching the coordinator at ${this.opts.coordinator}`);
      try {
        return await new Promise<WebSocket>((resolve, reject) => {
          const ws = (this.dialing = new WebSocket(this.opts.coordinator, {
            perMessageDeflate: false,
            handshakeTimeout: Math.max(1000, this.opts.connectTimeoutMs),
            // A zero mask, which ws then skips applying: masking guards proxies' caches against scripts in a
            // browser (RFC 6455 10.3), which is not who talks here, and XOR-ing a DP summary (4 bytes per
            // parameter) in JavaScript kept a rank deaf to heartbeats for over a second.
            generateMask: (mask: Buffer) => mask.fill(0),
            ...(this.opts.tls || this.opts.tlsCa ? { ca: this.opts.tls?.ca ?? this.opts.tlsCa } : {}),
          }));
          ws.once('open', () => {
            this.dialing = null; // from here on close() says goodbye properly (see close)
            ws.removeAllListeners('error');
            resolve(ws);
          });
          ws.once('error', reject);
        });
      } catch (err) {
        this.dialing = null;
        if (this.closing) throw new RankError(`stopped before reaching the coordinator at ${this.opts.coordinator}`);
        const last = (err as Error).message;
        // Not worth retrying: a malformed address, or a certificate we do not trust.
        if (/Invalid URL|invalid url|protocol|certificate|self.signed|SSL|TLS/i.test(last))
          throw new RankError(`--coordinator ${this.opts.coordinator}: ${last}`);
        if (Date.now() + 500 > deadline)
          throw new RankError(`cannot reach the coordinator at ${this.opts.coordinator} within ${this.opts.connectTimeoutMs} ms: ${last}`);
        if (!told)
          this.log.info(
            { err: last },
            `waiting for the coordinator at ${this.opts.coordinator} (retrying for up to ${Math.round(this.opts.connectTimeoutMs / 1000)} s)`,
          );
        told = true;
        await new Promise<void>((r) => {
          this.wakeDialler = r;
          setTimeout(r, 500);
        });
      }
    }
  }

  /** Estimate this rank's clock offset from the coordinator's: a few round trips, the shortest kept. */
  private async syncClock(rounds = 8): Promise<void> {
    const samples: { t0: number; t1: number; t2: number }[] = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = nowMs();
      const reply = new Promise<{ t0: number; t1: number; t2: number }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new RankError('the coordinator did not answer a clock request within 5 s')), 5000);
        this.clockReply = (a, t1, t2) => {
          if (a !== t0) return; // an answer to an earlier request that timed out
          clearTimeout(timer);
          resolve({ t0: a, t1, t2 });
        };
      });
      this.send({ type: 'clock', t0 });
      samples.push(await reply);
    }
    this.clockReply = null;
    this.clock = estimateOffset(samples);
    this.log.debug(this.clock, 'clock offset from the coordinator');
  }

  private send(m: ControlMessage): void {
    this.ws?.send(encodeMessage(m));
  }

  /** Send, and resolve once the message has been handed to the kernel. */
  private sendFlushed(m: ControlMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.ws) return reject(new RankError('no connection to the coordinator'));
      this.ws.send(encodeMessage(m), (err) => (err ? reject(err) : resolve()));
    });
  }

  private async handle(msg: ControlMessage): Promise<void> {
    switch (msg.type) {
      case 'assign': {
        this.rank = msg.rank;
        const c = msg.config;
        const plan = (this.plan = new RunPlan(c, msg.world));
        if (this.opts.maxRankMemory !== undefined) {
          const fit = fitCheck(plan, this.opts.maxRankMemory);
          if (fit.refused.length) throw new RankError(fit.message);
        }
        // This rank writes its checkpoint shards there (a shared file system across machines): check now.
        if (c.checkpoint) await checkWritableDir(c.checkpoint.dir, '--checkpoint-dir');
        this.log.info({ rank: msg.rank, world: msg.world, prev: `${msg.prevHost}:${msg.prevPort}` }, 'assigned; wiring the ring');
        this.threads = c.threads === 'auto' ? Math.max(1, Math.floor(availableParallelism() / msg.hostRanks)) : c.threads;
        this.computeMode = resolveCompute(c, availableParallelism(), msg.hostRanks * this.threads);
        logKernels(this.log, this.threads, this.computeMode);
        this.data = rankData(this.computeMode, plan.spec, c);
        // The initial weights take seconds at 10^7 parameters on a busy host: made now, while nobody counts
        // this rank's silence (the run has not started, the ring is not wired), not inside the first step.
        plan.theta0();
        this.ring = await wireRing({
          rank: msg.rank,
          world: msg.world,
          runId: msg.runId,
          ringKey: msg.ringKey,
          listener: this.listener!,
          prev: { host: msg.prevHost, port: msg.prevPort },
          timeoutMs: c.timeoutMs,
          chunkBytes: c.chunkBytes,
          keepOpen: true,
        });
        const limits = { chunkBytes: c.chunkBytes, timeoutMs: c.timeoutMs, linkScale: c.linkScale };
        this.hybrid = await wireHybridRings(msg, this.listener!, limits);
        const { links, ms } = await preflight(msg, this.listener!, this.log); // before the seal: its connections come through the listener
        this.listener!.seal();
        for (const ring of [this.ring, ...(this.hybrid?.rings ?? [])]) for (const link of [ring.next, ring.prev]) link?.keepalive(this.liveness);
        this.coll = new Collectives(this.ring, limits);
        await this.syncClock();
        this.send({ type: 'ready', rank: this.rank, ...(links.length ? { links, preflightMs: ms } : {}) });
        return;
      }
      case 'run':
        return this.train(msg.scheme);
      case 'finish':
        this.finished = true;
        return;
      default:
        throw new RankError(`unexpected ${msg.type} message from the coordinator`);
    }
  }

  private async train(scheme: SchemeName): Promise<void> {
    const { plan, coll, data } = this;
    if (!plan || !coll || !data) throw new RankError(`told to run ${scheme} before being assigned a rank`);
    await this.syncClock(); // again for every scheme: clocks drift over a long run
    const { config, spec } = plan;
    const compute = rankCompute(this.computeMode, spec, this.threads, config);
    const rank = coll.rank;
    try {
      const summary = await runScheme({
        scheme,
        plan,
        coll,
        data,
        compute,
        log: this.log,
        iface: this.opts.iface,
        clock: () => this.clock,
        resyncClock: () => this.syncClock(),
        straggleMs: this.opts.straggleMs ?? 0,
        computeMode: this.computeMode,
        ...(this.hybrid ? { hybrid: this.hybrid } : {}),
        onStep: (metrics) => this.send({ type: 'step', rank, scheme, metrics }),
        onCheckpoint: (step, w) => this.send({ type: 'checkpoint', scheme, step, rank, file: w.path, sha256: w.sha256, headerSha256: w.headerSha256 }),
      });
      await sendSummary(summary, (m) => this.sendFlushed(m));
    } finally {
      await compute.close();
    }
  }
}
