// Seating the ranks that joined: their final ids (asked-for ids kept, the rest grouped by host so that a host's
// ranks are ring neighbours), and what each is told when assigned.
import { ringsNeeded } from '../shared/training/schemes/table.js';
import { randomBytes } from 'node:crypto';
import type { ControlMessage } from '../shared/control/messages.js';
import type { RunConfig } from '../shared/control/run-config.js';
import { resolveHybrid } from '../shared/training/schemes/world-fit.js';
import { schemesUnder } from '../shared/accounting/fit.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import type { Member } from './members.js';
import { assignRanks } from './ring-order.js';

/** Final rank ids, and the members sorted by them. Throws where asked-for ids conflict. */
export function seatMembers(members: Member[], where: (m: Member) => string): void {
  const ids = assignRanks(members.map((m) => ({ host: m.info.host, requested: m.info.requested, worldSize: m.info.worldSize, who: where(m) })));
  members.forEach((m, i) => (m.info.rank = ids[i]));
  members.sort((a, b) => a.info.rank - b.info.rank);
}

/** Every rank's `assign`: its id, its ring neighbour, the run's id, key and config. */
export function assignments(members: Member[], config: RunConfig, world: number): [Member, ControlMessage][] {
  // The hybrid's sub-rings (and hpZ's group ring) and the all-pairs pre-flight dial any rank: every rank learns every address.
  const rings = ringsNeeded(config);
  const everyone = rings.replicas || rings.hpz || rings.qgz || config.preflight === 'all-pairs';
  const peers = everyone ? { peers: members.map((o) => ({ host: o.info.address, port: o.info.peerPort })) } : {};
  const hosts = { hosts: members.map((o) => o.info.host) };
  const runId = randomBytes(8).toString('hex');
  const ringKey = randomBytes(32); // only admitted ranks learn it: their ring peers check it (never logged)
  return members.map((m) => {
    const prev = members[(m.info.rank - 1 + world) % world].info;
    const hostRanks = members.filter((o) => o.info.hostname === m.info.hostname).length;
    const neighbour = { prevHost: prev.address, prevPort: prev.peerPort };
    return [m, { type: 'assign', rank: m.info.rank, world, runId, ringKey, ...neighbour, hostRanks, config, ...peers, ...hosts }];
  });
}

/** The config the ranks get: the shard group resolved from the hosts, or hsdp and zeropp left out of `all` (noted). */
export function resolveConfig(config: RunConfig, members: Member[], notes: string[]): RunConfig {
  const r = resolveHybrid(
    config,
    members.map((m) => m.info.host),
  );
  notes.push(...r.notes);
  return r.config;
}

/** Throws where the run cannot go on the world that joined: a batch it cannot divide, no scheme under the
 *  memory limit. Schemes whose peak is over it are left out (said in `notes`); the plan of the rest. */
export function refuseRun(plan: RunPlan, maxRankMemory: number | undefined, notes: string[]): RunPlan {
  const { config, world } = plan;
  if (config.batch % (world * config.accumulate) !== 0)
    throw new Error(
      `global batch ${config.batch} does not divide evenly over ${world} ranks${config.accumulate > 1 ? ` x ${config.accumulate} micro-batches` : ''}`,
    );
  if (maxRankMemory === undefined) return plan;
  const under = schemesUnder(plan, maxRankMemory);
  if (!under.anyFits) throw new Error(under.fit.message);
  if (!under.note) return plan;
  notes.push(under.note);
  return new RunPlan({ ...config, schemes: under.kept }, world);
}

/** The ranks not in `set`, for a message. */
export const missing = (members: Member[], set: Set<number>): string =>
  members
    .filter((m) => !set.has(m.info.rank))
    .map((m) => m.info.rank)
    .join(', ');
