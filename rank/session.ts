// One rank's protocol loop: join the coordinator, build the run when assigned (assembly.ts), train each scheme
// it is told to run, report, leave. Messages are handled strictly in order; an abort overtakes them.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import { decodeControl, encodeMessage, PROTOCOL_VERSION, type ControlMessage } from '../shared/control/messages.js';
import type { SchemeName } from '../shared/control/run-config.js';
import { PeerListener } from '../shared/transport/ring.js';
import type { LinkTls } from '../shared/transport/link-tls.js';
import { LinkError } from '../shared/transport/channel.js';
import { Liveness, LIVENESS, livenessFor, type LivenessTiming } from '../shared/transport/liveness.js';
import { socketOf } from '../shared/transport/ws-internals.js';
import { assembleRun, type AssembledRun } from './assembly.js';
import { ClockSync } from './clock-sync.js';
import { Dialler } from './dial.js';
import { QuietGate } from './preflight.js';
import { runScheme } from './scheme-run.js';
import { sendSummary } from './weights-upload.js';

export interface RankOptions {
  coordinator: string; // ws://host:port
  advertise?: string;
  peerHost: string;
  peerPort: number;
  connectTimeoutMs: number;
  maxRankMemory?: number; // bytes; refuse schemes whose peak would not fit
  iface?: string; // network interface whose kernel counters to report ('auto' = the one the ring uses)
  token?: string; // join token, if the coordinator requires one
  model?: string; // join only a run of this model (as --model describes it)
  heartbeatTimeoutMs?: number; // coordinator or ring peer silent this long on a quiet link: lost (the floor of an adaptive limit)
  straggleMs?: number; // a straggler on purpose: idle this long before every step (what skew costs the others)
  tlsCa?: Buffer; // trust this CA (or self-signed certificate) for a wss:// coordinator
  tls?: LinkTls; // serve the ring port over TLS and dial peers over TLS (the coordinator then serves wss:// too)
  rankId?: number; // ask for this rank id (RANK, JOB_COMPLETION_INDEX, --rank-id)
  worldSize?: number; // expect this world size (WORLD_SIZE)
  hostId?: string; // this rank's host for ring grouping (default: the coordinator uses its address)
}

export class RankSession {
  private ws: WebSocket | null = null;
  private listener: PeerListener | null = null;
  private assembled: AssembledRun | null = null; // once assigned
  private queue: Promise<void> = Promise.resolve();
  private finished = false;
  private watchdog: Liveness | null = null;
  private readonly dialler: Dialler;
  private readonly clock: ClockSync;
  private readonly gate: QuietGate;

  constructor(
    private readonly opts: RankOptions,
    private readonly log: Logger,
  ) {
    this.dialler = new Dialler({ coordinator: opts.coordinator, connectTimeoutMs: opts.connectTimeoutMs, ca: opts.tls?.ca ?? opts.tlsCa }, log);
    this.clock = new ClockSync((m) => this.send(m), log);
    this.gate = new QuietGate((m) => this.send(m));
  }

  private closeRings(): void {
    for (const r of [this.assembled?.ring, ...(this.assembled?.hybrid?.rings ?? [])]) r?.close();
  }

  /** How silence is judged on every connection of this rank (liveness.ts). */
  private get liveness(): LivenessTiming {
    return this.opts.heartbeatTimeoutMs === undefined ? LIVENESS : livenessFor(this.opts.heartbeatTimeoutMs);
  }

  /** Resolves when the coordinator says the run is over; rejects on any failure. */
  async run(): Promise<void> {
    this.listener = await PeerListener.open(this.opts.peerPort, this.opts.peerHost, this.opts.tls);
    this.log.debug({ peerPort: this.listener.port }, 'listening for peers');
    const ws = (this.ws = await this.dialler.dial());
    const { advertise, token, model, rankId, worldSize, hostId } = this.opts;
    const [host, ringTls] = [hostId ? { host: hostId } : {}, this.opts.tls ? { ringTls: true } : {}];
    const asked = { ...(advertise ? { advertise } : {}), ...(token !== undefined ? { token } : {}), ...(model ? { model } : {}), ...host, ...ringTls };
    const ids = { ...(rankId !== undefined ? { rankId } : {}), ...(worldSize !== undefined ? { worldSize } : {}) };
    this.send({ type: 'join', version: PROTOCOL_VERSION, peerPort: this.listener.port, hostname: hostname(), pid: process.pid, ...asked, ...ids });
    try {
      await this.loop(ws);
    } catch (err) {
      // Tell the coordinator why, if it can still hear us.
      const suspect = err instanceof LinkError ? { suspect: err.peerRank } : {};
      this.send({ type: 'abort', reason: `rank ${this.assembled?.rank ?? -1}: ${(err as Error).message}`, ...suspect });
      throw err;
    }
  }

  /** Until the coordinator says finish (resolves) or anything fails (rejects). */
  private loop(ws: WebSocket): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fail = (err: Error) => {
        this.closeRings(); // fails any collective still waiting, so the rank stops at once
        reject(err);
      };
      // The coordinator and this rank ping each other; silence means it (or the link to it) is gone.
      const watchdog = (this.watchdog = new Liveness(this.liveness, {
        socket: () => socketOf(ws),
        ping: () => ws.readyState === ws.OPEN && ws.ping(),
        lost: (silent, limit) => fail(new Error(`coordinator silent for ${silent} ms (limit ${limit} ms)`)),
      }).start());
      ws.on('ping', () => watchdog.heard());
      ws.on('pong', () => watchdog.heard());
      ws.on('message', (data) => {
        watchdog.heard();
        let msg: ControlMessage;
        try {
          msg = decodeControl(data as Buffer);
        } catch (err) {
          return fail(new Error(`bad message from coordinator: ${(err as Error).message}`));
        }
        if (msg.type === 'abort') return fail(new Error(`run aborted by the coordinator: ${msg.reason}`));
        // Clock replies are awaited by a handler already running: they must not queue behind it.
        if (msg.type === 'clock') return this.clock.reply(msg.t0, msg.t1 ?? NaN);
        if (msg.type === 'quiet') return this.gate.quiet(); // awaited by the pre-flight, inside the handler of 'assign'
        this.queue = this.queue.then(() => this.handle(msg)).then(() => (this.finished ? resolve() : undefined), fail);
      });
      ws.on('close', (code, reason) => {
        if (!this.finished) fail(new Error(`coordinator connection closed (${code}${reason.length ? `: ${reason.toString()}` : ''})`));
      });
      ws.on('error', (err) => fail(new Error(`coordinator connection: ${err.message}`)));
    });
  }

  async close(): Promise<void> {
    this.dialler.stop(); // also while still dialling
    this.watchdog?.stop();
    this.closeRings();
    await this.listener?.close();
    if (this.ws && this.ws.readyState === this.ws.OPEN) this.ws.close(1000, 'bye');
  }

  private send(m: ControlMessage): void {
    if (this.ws && this.ws.readyState === this.ws.OPEN) this.ws.send(encodeMessage(m));
  }

  private async handle(msg: ControlMessage): Promise<void> {
    switch (msg.type) {
      case 'assign': {
        const own = { maxRankMemory: this.opts.maxRankMemory, liveness: this.liveness, quiet: () => this.gate.wait(msg.rank, msg.config.timeoutMs) };
        const run = (this.assembled = await assembleRun(msg, this.listener!, own, this.log));
        await this.clock.sync();
        this.send({ type: 'ready', rank: run.rank, ...(run.links.length ? { links: run.links, preflightMs: run.preflightMs } : {}) });
        return;
      }
      case 'run':
        return this.train(msg.scheme);
      case 'finish':
        this.finished = true;
        return;
      default:
        throw new Error(`unexpected ${msg.type} message from the coordinator`);
    }
  }

  private async train(scheme: SchemeName): Promise<void> {
    const run = this.assembled;
    if (!run) throw new Error(`told to run ${scheme} before being assigned a rank`);
    await this.clock.sync(); // again for every scheme: clocks drift over a long run
    const { plan, coll, impl, rank } = run;
    const compute = impl.compute(plan.spec, run.threads, plan.config);
    try {
      const summary = await runScheme({
        ...{ scheme, plan, coll, data: run.data, compute, impl, log: this.log, iface: this.opts.iface, computeMode: run.computeMode },
        controlBytes: () => (this.ws ? (socketOf(this.ws)?.bytesWritten ?? 0) : 0),
        clock: () => this.clock.estimate,
        resyncClock: () => this.clock.sync(),
        straggleMs: this.opts.straggleMs ?? 0,
        ...(run.hybrid ? { hybrid: run.hybrid } : {}),
        onStep: (metrics) => this.send({ type: 'step', rank, scheme, metrics }),
        onCheckpoint: (step, w) => this.send({ type: 'checkpoint', scheme, step, rank, file: w.path, sha256: w.sha256, headerSha256: w.headerSha256 }),
      });
      await sendSummary(summary, (m) => this.sendFlushed(m));
    } finally {
      await compute.close();
    }
  }

  /** Send, and resolve once the message has been handed to the kernel. */
  private sendFlushed(m: ControlMessage): Promise<void> {
    return new Promise((resolve, reject) => this.ws!.send(encodeMessage(m), (err) => (err ? reject(err) : resolve())));
  }
}
