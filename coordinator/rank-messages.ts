// What the coordinator does with each message a joined rank sends during the run: pinged, ready, clock, step,
// weights, done, checkpoint, abort. Anything else, or anything out of turn, fails the run naming the rank.
import { nowMs } from '../shared/accounting/clock.js';
import type { Preflight } from '../shared/accounting/links.js';
import type { RunPlan } from '../shared/accounting/run-plan.js';
import type { ControlMessage, SchemeSummary } from '../shared/control/messages.js';
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';
import type { CheckpointQuorum } from './checkpoint-quorum.js';
import { CoordinatorError, type Member } from './members.js';
import type { RankReports } from './rank-reports.js';
import type { StepListener } from './run-types.js';
import type { WeightsInbox } from './weights-inbox.js';

/** The run's state the messages update, and how to answer or fail. */
export interface Inbound {
  config: RunConfig;
  ready: Set<number>;
  pinged: Set<number>; // ranks whose pre-flight round trips are timed
  preflight: Preflight;
  done: Map<SchemeName, SchemeSummary[]>;
  weights: WeightsInbox;
  checkpoints: CheckpointQuorum;
  stepReports: RankReports;
  current(): { scheme: SchemeName; step: number; plan: RunPlan } | null;
  world(): number;
  onStep: StepListener;
  send(m: Member, msg: ControlMessage): void;
  broadcast(msg: ControlMessage): void;
  where(m: Member): string;
  fail(err: CoordinatorError): void;
  failSoon(err: CoordinatorError): void;
}

/** Handles one message; true when the run may have moved on (waiters check again). */
export function handleRankMessage(s: Inbound, m: Member, msg: ControlMessage): boolean {
  const fail = (why: string) => (s.fail(new CoordinatorError(`${s.where(m)} ${why}`)), false);
  const current = s.current();
  switch (msg.type) {
    case 'pinged':
      // every rank timed its round trips on a quiet network: now the probes may fill the links
      s.pinged.add(m.info.rank);
      if (s.pinged.size === s.world()) s.broadcast({ type: 'quiet' });
      return false;
    case 'ready':
      s.ready.add(m.info.rank);
      s.preflight.links.push(...(msg.links ?? []));
      s.preflight.ms = Math.max(s.preflight.ms, msg.preflightMs ?? 0);
      return true;
    case 'clock':
      s.send(m, { type: 'clock', t0: msg.t0, t1: nowMs() });
      return false;
    case 'step': {
      if (!current || msg.scheme !== current.scheme) return fail(`reported a step of ${msg.scheme} out of turn`);
      const n = s.stepReports.add(`${msg.scheme}:${msg.metrics.step}`, s.world());
      current.step = Math.max(current.step, msg.metrics.step);
      s.onStep(msg.scheme, msg.metrics.step, n, msg.metrics);
      return true;
    }
    case 'weights': {
      const refused = msg.scheme !== current?.scheme || msg.rank !== m.info.rank ? 'weights out of turn' : s.weights.add(msg, current.plan);
      return refused ? fail(`sent ${refused}`) : false;
    }
    case 'done': {
      const sum = msg.summary;
      const whole = sum.scheme !== current?.scheme || sum.rank !== m.info.rank ? 'an unexpected summary' : s.weights.complete(sum, current.plan);
      if (typeof whole === 'string') return fail(`sent ${whole}`);
      s.done.get(sum.scheme)!.push(whole);
      return true;
    }
    case 'checkpoint': {
      const c = s.config.checkpoint;
      if (!c) return fail('wrote a checkpoint nobody asked for');
      s.checkpoints.add(c.dir, s.world(), { ...msg, rank: m.info.rank });
      return true;
    }
    case 'abort':
      // A rank whose neighbour died reports a broken link; the dead rank's own disconnect names the real
      // culprit, so let it arrive first if it is about to.
      m.aborted = new CoordinatorError(`${s.where(m)} failed: ${msg.reason}`);
      m.suspect = msg.suspect ?? null;
      s.failSoon(m.aborted);
      return false;
    default:
      return fail(`sent an unexpected ${msg.type} message`);
  }
}
