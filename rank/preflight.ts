// A rank's part of the pre-flight link test (--preflight, transport/link-probe.ts): between wiring its rings
// and sealing its listener, it sends to and receives from the peers its rounds name, and reports what it
// received.
import type { Logger } from 'pino';
import type { ControlMessage } from '../shared/control/messages.js';
import { probeLinks, probeRounds, type LinkProbe } from '../shared/transport/link-probe.js';
import type { PeerListener } from '../shared/transport/ring.js';

export async function preflight(
  msg: Extract<ControlMessage, { type: 'assign' }>,
  listener: PeerListener,
  log: Logger,
): Promise<{ links: LinkProbe[]; ms: number }> {
  const mode = msg.config.preflight;
  // Without the hosts (a coordinator that sent none), every rank counts as its own host.
  const hosts = msg.hosts?.length === msg.world ? msg.hosts : Array.from({ length: msg.world }, (_, r) => String(r));
  const rounds = probeRounds(mode, msg.rank, hosts);
  if (!rounds.length) return { links: [], ms: 0 };
  const peers = [...(msg.peers ?? [])];
  peers[(msg.rank - 1 + msg.world) % msg.world] ??= { host: msg.prevHost, port: msg.prevPort }; // the ring's: always known
  const t0 = performance.now();
  const links = await probeLinks({ self: msg.rank, peers, listener, runId: msg.runId, ringKey: msg.ringKey, timeoutMs: msg.config.timeoutMs }, rounds);
  const ms = performance.now() - t0;
  log.info({ mode, ms: Math.round(ms), links }, 'pre-flight link test done');
  return { links, ms };
}
