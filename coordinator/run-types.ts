// What a coordinator is given (its options) and what a run gives back, apart from the coordinator itself.
import type { SchemeSummary, StepMetrics } from '../shared/control/messages.js';
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';
import type { RunPlan } from '../shared/accounting/run-plan.js';
import type { RankInfo } from './members.js';
import type { Preflight } from '../shared/accounting/links.js';

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
  linksOnly?: boolean; // `zerowire links`: wire the ring, run the pre-flight, report it, train nothing
  heartbeatTimeoutMs?: number; // a rank silent this long on a quiet link is lost (the floor of an adaptive limit: liveness.ts)
}

export interface RunResult {
  world: number;
  plan: RunPlan; // the run as resolved for that world
  ranks: RankInfo[];
  summaries: Map<SchemeName, SchemeSummary[]>; // per scheme, indexed by rank
  messages: { largest: number; cap: number }; // the largest control message a rank sent, and the cap it had
  notes: string[]; // how the run was resolved (a scheme left out, and why)
  preflight: Preflight;
}

export type StepListener = (scheme: SchemeName, step: number, ranksDone: number, metrics: StepMetrics) => void;
