// The coordinator: lets ranks join, assigns rank ids, wires them into a ring, runs each scheme and collects
// what the ranks measured. It never touches tensors on the data plane.
import { encodeMessage, type ControlMessage, type SchemeSummary } from '../shared/control/messages.js';
import type { SchemeName } from '../shared/control/run-config.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import { modelSpec } from '../shared/models/registry.js';
import { BindError } from '../shared/transport/bind-error.js';
import { memberMessageCap } from './message-caps.js';
import { closeControl, listenControl, type ControlServer } from './control-server.js';
import { RankReports } from './rank-reports.js';
import { CheckpointQuorum } from './checkpoint-quorum.js';
import { settleWorldSize } from './world-size.js';
import { CoordinatorError, nameOf, type Member, type RankInfo } from './members.js';
import { RunFailure } from './run-failure.js';
import { WeightsInbox } from './weights-inbox.js';
import { Membership, type Phase } from './membership.js';
import { handleRankMessage, type Inbound } from './rank-messages.js';
import { assignments, missing, refuseRun, resolveConfig, seatMembers } from './seating.js';

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
  private readonly runFailure = new RunFailure(
    () => this.members,
    (m) => this.where(m),
    () => this.phase === 'finished' || this.phase === 'failed',
    () => (this.phase = 'failed'),
  );
  private readonly ready = new Set<number>();
  private readonly pinged = new Set<number>();
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
  /** What the ranks' messages update (rank-messages.ts). */
  private get inbound(): Inbound {
    return {
      ...{ config: this.opts.config, ready: this.ready, pinged: this.pinged, preflight: this.preflight, done: this.done, weights: this.weights },
      ...{ checkpoints: this.checkpoints, stepReports: this.stepReports, onStep: this.onStep },
      current: () => this.current,
      world: () => this.members.length,
      send: (m, msg) => this.send(m, msg),
      broadcast: (msg) => this.members.forEach((m) => this.send(m, msg)),
      where: (m) => this.where(m),
      fail: (err) => this.runFailure.fail(err),
      failSoon: (err) => this.runFailure.failSoon(err),
    };
  }

  constructor(private readonly opts: CoordinatorOptions) {
    this.membership = new Membership(
      { token: opts.token, world: opts.world, model: modelSpec(opts.config).describe(), tls: opts.tls !== undefined },
      JOIN_LIMITS.joinMessageBytes,
      opts.heartbeatTimeoutMs,
      {
        phase: () => this.phase,
        wired: () => this.wired,
        fail: (err) => this.runFailure.fail(err),
        failSoon: (err) => this.runFailure.failSoon(err),
        message: (m, msg) => this.onMessage(m, msg),
        joined: (info) => this.onJoin(info),
        joinedSocket: (socket) => this.server?.waiting.delete(socket),
        refused: (from, why) => this.onRefuse(from, why),
        progress: () => this.runFailure.progress(),
        where: (m) => this.where(m),
      },
    );
    this.checkpoints = new CheckpointQuorum(
      opts.config,
      (scheme, step, index) => this.onCheckpoint(scheme, step, index),
      (why) => this.runFailure.fail(new CoordinatorError(why)),
    );
  }

  private get members(): Member[] {
    return this.membership.members;
  }

  async listen(): Promise<number> {
    const [onConnection, onRefuse] = [this.membership.onConnection.bind(this.membership), (from: string, why: string) => this.onRefuse(from, why)];
    try {
      this.server = await listenControl(this.opts.host, this.opts.port, this.opts.tls, JOIN_LIMITS, onConnection, onRefuse);
    } catch (err) {
      throw err instanceof BindError ? err : new CoordinatorError((err as Error).message);
    }
    return this.server.port;
  }

  /** Run every scheme of the config and return what the ranks reported. */
  async run(): Promise<RunResult> {
    const world = await this.settleWorld();
    this.phase = 'running';
    const resolved = this.resolve(() => {
      seatMembers(this.members, (m) => this.where(m));
      this.onRing(this.members.map((m) => m.info));
      return resolveConfig(this.opts.config, this.members, this.notes);
    });
    const plan = this.resolve(() => refuseRun(new RunPlan(resolved, world), this.opts.maxRankMemory, this.notes));
    const config = plan.config; // without the schemes over --max-rank-memory
    this.checkpoints.resolved(config);
    this.membership.capMessages(memberMessageCap(plan));
    for (const [m, msg] of assignments(this.members, config, world)) this.send(m, msg);
    await this.runFailure.until(
      () => this.ready.size === world,
      config.timeoutMs + 10_000,
      () => `ranks ${missing(this.members, this.ready)} did not wire the ring`,
    );
    this.wired = true;
    this.preflight.mode = config.preflight;
    for (const scheme of this.opts.linksOnly ? [] : config.schemes) {
      this.current = { scheme, step: 0, plan };
      this.done.set(scheme, []);
      for (const m of this.members) this.send(m, { type: 'run', scheme });
      const got = this.done.get(scheme)!;
      await this.runFailure.until(
        () => got.length === world,
        Number.POSITIVE_INFINITY,
        () => '',
      );
      got.sort((a, b) => a.rank - b.rank);
    }
    this.current = null;
    await this.checkpoints.settled();
    if (this.runFailure.failure) throw this.runFailure.failure;
    const ranks = this.members.map((m) => m.info);
    return { world, plan, ranks, summaries: this.done, messages: this.membership.messages, notes: this.notes, preflight: this.preflight };
  }

  /** `f`'s result, or the run failed with its error. */
  private resolve<T>(f: () => T): T {
    try {
      return f();
    } catch (err) {
      this.runFailure.fail(new CoordinatorError((err as Error).message));
      throw this.runFailure.failure!;
    }
  }

  /** How many ranks this run has: the number given, or (auto) what joined once things settled. */
  private async settleWorld(): Promise<number> {
    try {
      const { world, how, short } = await settleWorldSize(
        this.opts,
        () => this.members.length,
        () => this.runFailure.failure,
      );
      if (how) this.onWorld(world, how, short);
      return world;
    } catch (err) {
      throw err instanceof CoordinatorError ? err : new CoordinatorError((err as Error).message);
    }
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
    this.runFailure.fail(new CoordinatorError(reason));
    await this.closeServer(1000);
  }

  private async closeServer(graceMs: number): Promise<void> {
    this.membership.stopWatching();
    this.runFailure.stop();
    const server = this.server;
    this.server = null;
    if (server) await closeControl(server, graceMs, () => this.members.some((m) => m.ws.readyState === m.ws.OPEN));
  }

  private send(m: Member, msg: ControlMessage): void {
    if (m.ws.readyState === m.ws.OPEN) m.ws.send(encodeMessage(msg));
  }

  private where(m: Member): string {
    return nameOf(m, this.current);
  }

  private onMessage(m: Member, msg: ControlMessage): void {
    if (handleRankMessage(this.inbound, m, msg)) this.runFailure.progress();
  }
}
