// The coordinator: lets ranks join, assigns rank ids, wires them into a ring, runs each scheme and collects
// what the ranks measured. It never touches tensors on the data plane.
import { randomBytes } from 'node:crypto';
import { fitCheck } from '../shared/accounting/fit.js';
import { encodeMessage, type ControlMessage, type SchemeSummary } from '../shared/control/messages.js';
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';
import { resolveHybrid } from '../shared/control/shard-groups.js';
import { nowMs } from '../shared/accounting/clock.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { BindError } from '../shared/transport/bind-error.js';
import { memberMessageCap } from './message-caps.js';
import { assignRanks } from './ring-order.js';
import { closeControl, listenControl, type ControlServer } from './control-server.js';
import { RankReports } from './rank-reports.js';
import { CheckpointQuorum } from './checkpoint-quorum.js';
import { settleWorldSize } from './world-size.js';
import { CoordinatorError, lostOnTheRing, nameOf, type Member, type RankInfo } from './members.js';
import { Waiters } from './waiters.js';
import { WeightsInbox } from './weights-inbox.js';
import { Membership, type Phase } from './membership.js';

export { CoordinatorError, type RankInfo } from './members.js';

export type { CoordinatorOptions, RunResult, StepListener } from './run-types.js';
import type { CoordinatorOptions, RunResult, StepListener } from './run-types.js';
import type { Preflight } from '../shared/accounting/links.js';

/** Limits for connections that have not joined (see control-server.ts). */
const JOIN_LIMITS = { joinMessageBytes: 64 << 10, joinTimeoutMs: 5_000, maxWaiting: 64 } as const;
export class Coordinator {
  private server: ControlServer | null = null;
  private readonly membership: Membership;
  private phase: Phase = 'joining';
  private wired = false; // every rank reported its ring ready
  private readonly notes: string[] = []; // what the report should say about how the run was resolved
  private failure: CoordinatorError | null = null;
  private readonly waiters = new Waiters();
  private readonly ready = new Set<number>();
  private readonly preflight: Preflight = { mode: 'off', ms: 0, links: [] }; // what the ranks' pre-flight measured
  private readonly done = new Map<SchemeName, SchemeSummary[]>();
  private readonly weights = new WeightsInbox();
  private current: { scheme: SchemeName; step: number; plan: RunPlan } | null = null;
  private readonly stepReports = new RankReports();
  onStep: StepListener = () => undefined;
  onJoin: (info: RankInfo) => void = () => undefined;
  onWorld: (world: number, how: string, short: boolean) => void = () => undefined;
  onCheckpoint: (scheme: SchemeName, step: number, index: string) => void = () => undefined;
  onRefuse: (from: string, why: string) => void = () => undefined;
  onRing: (ranks: RankInfo[]) => void = () => undefined;
  private readonly checkpoints: CheckpointQuorum;
  private pendingFailure: NodeJS.Timeout | null = null;

  constructor(private readonly opts: CoordinatorOptions) {
    this.membership = new Membership(
      { token: opts.token, world: opts.world, model: opts.config.model, tls: opts.tls !== undefined },
      JOIN_LIMITS.joinMessageBytes,
      opts.heartbeatTimeoutMs,
      {
        phase: () => this.phase,
        wired: () => this.wired,
        fail: (err) => this.failWith(err),
        failSoon: (err) => this.failSoon(err),
        message: (m, msg) => this.onMessage(m, msg),
        joined: (info) => this.onJoin(info),
        joinedSocket: (socket) => this.server?.waiting.delete(socket),
        refused: (from, why) => this.onRefuse(from, why),
        progress: () => this.progress(),
        where: (m) => this.where(m),
      },
    );
    this.checkpoints = new CheckpointQuorum(
      opts.config,
      (scheme, step, index) => this.onCheckpoint(scheme, step, index),
      (why) => this.failWith(new CoordinatorError(why)),
    );
  }

  private get members(): Member[] {
    return this.membership.members;
  }

  async listen(): Promise<number> {
    const { host, port, tls } = this.opts;
    try {
      this.server = await listenControl(
        host,
        port,
        tls,
        JOIN_LIMITS,
        (ws, req) => this.membership.onConnection(ws, req),
        (from, why) => this.onRefuse(from, why),
      );
    } catch (err) {
      throw err instanceof BindError ? err : new CoordinatorError((err as Error).message);
    }
    return this.server.port;
  }

  /** Run every scheme of the config and return what the ranks reported. */
  async run(): Promise<RunResult> {
    const world = await this.settleWorld();
    this.phase = 'running';
    this.seatRanks();
    const config = this.hybridConfig();
    this.checkpoints.resolved(config);
    const plan = new RunPlan(config, world);
    if (config.batch % (world * config.accumulate) !== 0)
      this.failWith(
        new CoordinatorError(
          `global batch ${config.batch} does not divide evenly over ${world} ranks${config.accumulate > 1 ? ` x ${config.accumulate} micro-batches` : ''}`,
        ),
      );
    if (this.opts.maxRankMemory !== undefined) {
      const fit = fitCheck(plan, this.opts.maxRankMemory);
      if (fit.refused.length) this.failWith(new CoordinatorError(fit.message));
    }
    if (this.failure) throw this.failure;
    this.membership.capMessages(memberMessageCap(plan));
    this.assignRanks(config, world);
    await this.until(
      () => this.ready.size === world,
      config.timeoutMs + 10_000,
      () => `ranks ${this.missing(this.ready)} did not wire the ring`,
    );
    this.wired = true;
    this.preflight.mode = config.preflight;
    for (const scheme of this.opts.linksOnly ? [] : config.schemes) {
      this.current = { scheme, step: 0, plan };
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
    await this.checkpoints.settled();
    if (this.failure) throw this.failure;
    const ranks = this.members.map((m) => m.info);
    return { world, plan, ranks, summaries: this.done, messages: this.membership.messages, notes: this.notes, preflight: this.preflight };
  }

  /** Tell every rank its id, its ring neighbour, the run's key and config. */
  private assignRanks(config: RunConfig, world: number): void {
    // The hybrid's sub-rings and the all-pairs pre-flight dial any rank: every rank learns every address.
    const everyone = config.schemes.includes('hsdp') || config.preflight === 'all-pairs';
    const peers = everyone ? { peers: this.members.map((o) => ({ host: o.info.address, port: o.info.peerPort })) } : {};
    const hosts = { hosts: this.members.map((o) => o.info.host) };
    const runId = randomBytes(8).toString('hex');
    const ringKey = randomBytes(32); // only admitted ranks learn it: their ring peers check it (never logged)
    for (const m of this.members) {
      const prev = this.members[(m.info.rank - 1 + world) % world].info;
      const hostRanks = this.members.filter((o) => o.info.hostname === m.info.hostname).length;
      const neighbour = { prevHost: prev.address, prevPort: prev.peerPort };
      this.send(m, { type: 'assign', rank: m.info.rank, world, runId, ringKey, ...neighbour, hostRanks, config, ...peers, ...hosts });
    }
  }

  /** The config the ranks get: hsdp's shard group resolved from the hosts, or hsdp left out of `all`. */
  private hybridConfig(): RunConfig {
    try {
      const r = resolveHybrid(
        this.opts.config,
        this.members.map((m) => m.info.host),
      );
      if (r.note) this.notes.push(r.note);
      return r.config;
    } catch (err) {
      this.failWith(new CoordinatorError((err as Error).message));
      throw this.failure!;
    }
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

  private async closeServer(graceMs: number): Promise<void> {
    this.membership.stopWatching();
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
    return this.waiters.until(check, timeoutMs, () => this.failWith(new CoordinatorError(why())));
  }

  private progress(): void {
    this.waiters.progress();
  }

  private failWith(err: CoordinatorError): void {
    if (this.failure || this.phase === 'finished') return;
    this.failure = err;
    this.phase = 'failed';
    for (const m of this.members) this.send(m, { type: 'abort', reason: err.message });
    this.waiters.failAll(err);
  }

  /** A rank stopping with a reason, or a broken link it reports: the verdict waits a moment, since a rank
   *  whose neighbour died reports the broken link first and the dead rank's own disconnect names the real
   *  culprit. The first such reason stands. */
  private failSoon(err: CoordinatorError): void {
    if (!this.pendingFailure) this.pendingFailure = setTimeout(() => this.failWith(this.verdict(err)), 250);
  }

  /** Who failed, from what the ranks said: a rank its ring neighbours lost, or else the first reason. */
  private verdict(first: CoordinatorError): CoordinatorError {
    const ring = lostOnTheRing(this.members);
    return ring ? new CoordinatorError(`${this.where(ring.lost)} went silent on the ring: ${ring.report.message}`) : first;
  }

  private where(m: Member): string {
    return nameOf(m, this.current);
  }

  private onMessage(m: Member, msg: ControlMessage): void {
    switch (msg.type) {
      case 'ready':
        this.ready.add(m.info.rank);
        this.preflight.links.push(...(msg.links ?? []));
        this.preflight.ms = Math.max(this.preflight.ms, msg.preflightMs ?? 0);
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
      case 'weights': {
        const refused = msg.scheme !== this.current?.scheme || msg.rank !== m.info.rank ? 'weights out of turn' : this.weights.add(msg, this.current!.plan);
        return refused ? this.failWith(new CoordinatorError(`${this.where(m)} sent ${refused}`)) : undefined;
      }
      case 'done': {
        const s = msg.summary;
        const whole = s.scheme !== this.current?.scheme || s.rank !== m.info.rank ? 'an unexpected summary' : this.weights.complete(s, this.current!.plan);
        if (typeof whole === 'string') return this.failWith(new CoordinatorError(`${this.where(m)} sent ${whole}`));
        this.done.get(s.scheme)!.push(whole);
        break;
      }
      case 'checkpoint': {
        const c = this.opts.config.checkpoint;
        if (!c) return this.failWith(new CoordinatorError(`${this.where(m)} wrote a checkpoint nobody asked for`));
        this.checkpoints.add(c.dir, this.members.length, { ...msg, rank: m.info.rank });
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
