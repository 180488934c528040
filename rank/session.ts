// One rank's life: join the coordinator, wire the ring, train each scheme it is told to run, report, leave.
import { hostname } from 'node:os';
import { WebSocket } from 'ws';
import { Collectives, type CollectiveRecord } from '../shared/collectives.js';
import { addTraffic, zeroTraffic } from '../shared/channel.js';
import { SyntheticData } from '../shared/data.js';
import { ShardLayout } from '../shared/layout.js';
import { MemoryLedger } from '../shared/memory.js';
import { MlpSpec } from '../shared/model.js';
import { decodeControl, encodeMessage, HEARTBEAT, PROTOCOL_VERSION, type ControlMessage, type RunConfig, type SchemeName, type SchemeSummary, type StepMetrics } from '../shared/protocol.js';
import { PeerListener, wireRing, type Ring } from '../shared/ring.js';
import { SCHEME_CLASSES } from '../shared/schemes.js';
import { fitCheck } from '../shared/fit.js';
import { readRankShard, writeRankShard } from '../shared/checkpoint.js';
import { InlineCompute, type Compute } from '../shared/compute.js';
import { WorkerCompute } from './worker-compute.js';
import { readInterfaceCounters, type InterfaceCounters } from '../shared/iface.js';
import type { Logger } from 'pino';

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
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number; // coordinator or ring peer silent this long: the run is lost
  tlsCa?: Buffer; // trust this CA (or self-signed certificate) for a wss:// coordinator
}

export class RankError extends Error {
  override name = 'RankError';
}

function brief(r: CollectiveRecord) {
  return { kind: r.kind, label: r.label, elements: r.elements, padded: r.padded, payload: r.sent.payload, frame: r.sent.frame, ms: r.ms };
}

export class RankSession {
  private ws: WebSocket | null = null;
  private listener: PeerListener | null = null;
  private ring: Ring | null = null;
  private coll: Collectives | null = null;
  private rank = -1;
  private config: RunConfig | null = null;
  private data: SyntheticData | null = null;
  private queue: Promise<void> = Promise.resolve();
  private finished = false;
  private watchdog: NodeJS.Timeout | null = null;

  constructor(
    private readonly opts: RankOptions,
    private readonly log: Logger,
  ) {}

  /** Resolves when the coordinator says the run is over; rejects on any failure. */
  async run(): Promise<void> {
    this.listener = await PeerListener.open(this.opts.peerPort, this.opts.peerHost);
    this.log.debug({ peerPort: this.listener.port }, 'listening for peers');
    const ws = await this.connect();
    this.ws = ws;
    const { advertise, token, model } = this.opts;
    ws.send(encodeMessage({ type: 'join', version: PROTOCOL_VERSION, peerPort: this.listener.port, hostname: hostname(), pid: process.pid, ...(advertise ? { advertise } : {}), ...(token !== undefined ? { token } : {}), ...(model ? { model } : {}) }));
    let lastHeard = Date.now();
    const timeoutMs = this.opts.heartbeatTimeoutMs ?? HEARTBEAT.timeoutMs;
    try {
      await new Promise<void>((resolve, reject) => {
        const fail = (err: Error) => {
          this.ring?.close(); // fails any collective still waiting, so the rank stops at once
          reject(err);
        };
        // The coordinator pings every rank; silence means it (or the link to it) is gone.
        this.watchdog = setInterval(() => {
          if (Date.now() - lastHeard > timeoutMs) fail(new RankError(`coordinator silent for ${Date.now() - lastHeard} ms (heartbeat timeout ${timeoutMs} ms)`));
        }, 200);
        ws.on('ping', () => (lastHeard = Date.now()));
        ws.on('message', (data) => {
          lastHeard = Date.now();
          let msg: ControlMessage;
          try {
            msg = decodeControl(data as Buffer);
          } catch (err) {
            return fail(new RankError(`bad message from coordinator: ${(err as Error).message}`));
          }
          // An abort overtakes whatever is running; everything else is handled strictly in order.
          if (msg.type === 'abort') return fail(new RankError(`run aborted by the coordinator: ${msg.reason}`));
          this.queue = this.queue.then(() => this.handle(msg)).then(() => (this.finished ? resolve() : undefined), fail);
        });
        ws.on('close', (code, reason) => {
          if (!this.finished) fail(new RankError(`coordinator connection closed (${code}${reason.length ? `: ${reason.toString()}` : ''})`));
        });
        ws.on('error', (err) => fail(new RankError(`coordinator connection: ${err.message}`)));
      });
    } catch (err) {
      // Tell the coordinator why, if it can still hear us.
      if (ws.readyState === ws.OPEN) ws.send(encodeMessage({ type: 'abort', reason: `rank ${this.rank}: ${(err as Error).message}` }));
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.watchdog) clearInterval(this.watchdog);
    this.ring?.close();
    await this.listener?.close();
    if (this.ws && this.ws.readyState === this.ws.OPEN) this.ws.close(1000, 'bye');
  }

  /** Dial the coordinator, retrying until it is up (containers start in any order) or the timeout passes. */
  private async connect(): Promise<WebSocket> {
    const deadline = Date.now() + this.opts.connectTimeoutMs;
    let last = '';
    for (;;) {
      try {
        return await new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(this.opts.coordinator, { perMessageDeflate: false, handshakeTimeout: Math.max(1000, this.opts.connectTimeoutMs), ...(this.opts.tlsCa ? { ca: this.opts.tlsCa } : {}) });
          ws.once('open', () => {
            ws.removeAllListeners('error');
            resolve(ws);
          });
          ws.once('error', reject);
        });
      } catch (err) {
        last = (err as Error).message;
        // Not worth retrying: a malformed address, or a certificate we do not trust.
        if (/Invalid URL|invalid url|protocol|certificate|self.signed|SSL|TLS/i.test(last)) throw new RankError(`--coordinator ${this.opts.coordinator}: ${last}`);
        if (Date.now() + 500 > deadline) throw new RankError(`cannot reach the coordinator at ${this.opts.coordinator} within ${this.opts.connectTimeoutMs} ms: ${last}`);
        this.log.debug({ err: last }, 'coordinator not reachable yet; retrying');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private send(m: ControlMessage): void {
    this.ws?.send(encodeMessage(m));
  }

  private async handle(msg: ControlMessage): Promise<void> {
    switch (msg.type) {
      case 'assign': {
        this.rank = msg.rank;
        this.config = msg.config;
        const c = msg.config;
        const spec = new MlpSpec(c.model);
        if (this.opts.maxRankMemory !== undefined) {
          const fit = fitCheck(c, spec, msg.world, this.opts.maxRankMemory);
          if (fit.refused.length) throw new RankError(fit.message);
        }
        this.log.info({ rank: msg.rank, world: msg.world, prev: `${msg.prevHost}:${msg.prevPort}` }, 'assigned; wiring the ring');
        this.data = new SyntheticData(spec.inputs, spec.classes, c.samples, c.seed);
        this.ring = await wireRing({ rank: msg.rank, world: msg.world, runId: msg.runId, ringKey: msg.ringKey, listener: this.listener!, prev: { host: msg.prevHost, port: msg.prevPort }, timeoutMs: c.timeoutMs });
        for (const link of [this.ring.next, this.ring.prev]) link?.keepalive(this.opts.heartbeatMs ?? HEARTBEAT.intervalMs, this.opts.heartbeatTimeoutMs ?? HEARTBEAT.timeoutMs);
        this.coll = new Collectives(this.ring, { chunkBytes: c.chunkBytes, timeoutMs: c.timeoutMs });
        this.send({ type: 'ready', rank: this.rank });
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
    const c = this.config;
    const ring = this.ring;
    const coll = this.coll;
    if (!c || !ring || !coll || !this.data) throw new RankError(`told to run ${scheme} before being assigned a rank`);
    const spec = new MlpSpec(c.model);
    const layout = new ShardLayout(spec, ring.world, ring.rank, c.unit);
    const ledger = new MemoryLedger();
    coll.useLedger(ledger);
    const abBefore = process.memoryUsage().arrayBuffers;
    const sock0 = this.socketTotals();
    const iface0 = this.ifaceCounters();
    const compute = c.compute === 'thread' ? new WorkerCompute(spec) : new InlineCompute(spec);
    try {
      await this.trainWith(scheme, c, ring, coll, spec, layout, ledger, compute, { abBefore, sock0, iface0 });
    } finally {
      await compute.close();
      coll.useLedger(undefined);
    }
  }

  private async trainWith(
    scheme: SchemeName,
    c: RunConfig,
    ring: Ring,
    coll: Collectives,
    spec: MlpSpec,
    layout: ShardLayout,
    ledger: MemoryLedger,
    compute: Compute,
    before: { abBefore: number; sock0: { written: number; read: number }; iface0: InterfaceCounters | null },
  ): Promise<void> {
    const { abBefore, sock0, iface0 } = before;
    const s = new SCHEME_CLASSES[scheme]().setup({ layout, coll, ledger, hyper: { lr: c.lr, beta1: c.beta1, beta2: c.beta2, eps: c.eps }, dtype: c.wireDtype, theta0: spec.init(c.seed), prefetch: c.prefetch, compute });
    const resume = c.resume?.[scheme];
    if (resume) {
      await s.loadOptimizerState(await readRankShard(resume.dir, scheme, resume.step, ring.rank, s.optimizerState().master.length));
      this.log.info({ scheme, step: resume.step }, 'resumed from checkpoint');
    }
    const resident = { ...ledger.live };
    let peak = 0;
    let peakBands = { ...ledger.live };
    let peakComm = 0;
    let abPeak = abBefore;
    const steps: StepMetrics[] = [];
    for (let t = resume?.step ?? 0; t < c.steps; t++) {
      const st = await s.step(this.data!.rankBatch(t, c.batch, ring.rank, ring.world));
      if (ledger.peak > peak) {
        peak = ledger.peak;
        peakBands = { ...ledger.peakBands };
      }
      peakComm = Math.max(peakComm, ledger.peakPerBand.comm);
      abPeak = Math.max(abPeak, st.arrayBuffersPeak);
      const m: StepMetrics = {
        step: t,
        loss: st.loss,
        stepMs: st.stepMs,
        computeMs: st.computeMs,
        commMs: st.commMs,
        exposedMs: st.exposedMs,
        // Payload and envelopes per collective; the socket count over the whole step (collectives may overlap).
        sent: { ...st.records.reduce((a, r) => addTraffic(a, r.sent), zeroTraffic()), frame: st.sentFrame },
        recv: { ...st.records.reduce((a, r) => addTraffic(a, r.recv), zeroTraffic()), frame: st.recvFrame },
        collectives: st.records.map(brief),
      };
      steps.push(m);
      this.log.debug({ scheme, step: t, loss: st.loss }, 'step');
      this.send({ type: 'step', rank: ring.rank, scheme, metrics: m });
      if (c.checkpoint && (t + 1) % c.checkpoint.every === 0) {
        const file = await writeRankShard(c.checkpoint.dir, scheme, ring.rank, ring.world, s.optimizerState());
        this.send({ type: 'checkpoint', scheme, step: t + 1, rank: ring.rank, file });
      }
    }
    const sock1 = this.socketTotals();
    const iface1 = this.ifaceCounters();
    const master = s.masterState().data;
    const summary: SchemeSummary = {
      scheme,
      rank: ring.rank,
      params: layout.params,
      paddedParams: layout.paddedTotal,
      steps,
      memory: { resident, peak, peakBands, peakComm, arrayBuffersBefore: abBefore, arrayBuffersPeak: abPeak },
      socket: { sent: sock1.written - sock0.written, recv: sock1.read - sock0.read },
      master: new Uint8Array(master.buffer, master.byteOffset, master.byteLength),
    };
    if (iface0 && iface1) summary.iface = { name: iface0.name, tx: iface1.tx - iface0.tx, rx: iface1.rx - iface0.rx };
    this.send({ type: 'done', summary });
  }

  /** TCP bytes on both peer sockets (handshakes included). */
  private socketTotals(): { written: number; read: number } {
    const a = this.ring?.next?.socketBytes() ?? { written: 0, read: 0 };
    const b = this.ring?.prev?.socketBytes() ?? { written: 0, read: 0 };
    return { written: a.written + b.written, read: a.read + b.read };
  }

  private ifaceCounters(): InterfaceCounters | null {
    if (!this.opts.iface) return null;
    return readInterfaceCounters(this.opts.iface, this.ring?.next?.localAddress ?? null);
  }
}
