// A rank's part of the pre-flight link test (--preflight, transport/link-probe.ts): between wiring its rings
// and sealing its listener, it times its round trips, waits until every rank has (the coordinator's `quiet`),
// then sends to and receives from the peers its rounds name, and reports what it received.
import type { Logger } from 'pino';
import type { ControlMessage } from '../shared/control/messages.js';
import { probeLinks, probeRounds, type LinkProbe } from '../shared/transport/link-probe.js';
import type { PeerListener } from '../shared/transport/ring.js';

/** The pre-flight's one meeting point: this rank says its round trips are timed ('pinged') and waits for the
 *  coordinator's word that every rank's are ('quiet'), which the protocol loop hands in. */
export class QuietGate {
  private heard = false;
  private release: (() => void) | null = null;

  constructor(private readonly send: (m: ControlMessage) => void) {}

  quiet(): void {
    this.heard = true;
    this.release?.();
  }

  wait(rank: number, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`pre-flight: the other ranks had not timed their round trips within ${timeoutMs} ms (the coordinator never said quiet)`)),
        timeoutMs,
      );
      timer.unref();
      this.release = () => (clearTimeout(timer), resolve());
      this.send({ type: 'pinged', rank });
      if (this.heard) this.release();
    });
  }
}

export async function preflight(
  msg: Extract<ControlMessage, { type: 'assign' }>,
  listener: PeerListener,
  log: Logger,
  quiet: () => Promise<void>,
): Promise<{ links: LinkProbe[]; ms: number }> {
  const mode = msg.config.preflight;
  if (mode === 'off' || msg.world < 2) return { links: [], ms: 0 };
  // Without the hosts (a coordinator that sent none), every rank counts as its own host.
  const hosts = msg.hosts?.length === msg.world ? msg.hosts : Array.from({ length: msg.world }, (_, r) => String(r));
  const rounds = probeRounds(mode, msg.rank, hosts);
  const peers = [...(msg.peers ?? [])];
  peers[(msg.rank - 1 + msg.world) % msg.world] ??= { host: msg.prevHost, port: msg.prevPort }; // the ring's: always known
  const t0 = performance.now();
  // every rank meets at `quiet`, those without a link to probe too (all-pairs probes one rank per host)
  const links = await probeLinks({ self: msg.rank, peers, listener, runId: msg.runId, ringKey: msg.ringKey, timeoutMs: msg.config.timeoutMs, quiet }, rounds);
  const ms = performance.now() - t0;
  if (rounds.length) log.info({ mode, ms: Math.round(ms), links }, 'pre-flight link test done');
  return { links, ms: rounds.length ? ms : 0 };
}
