// Is the other end of a connection alive? One detector for every connection a run has (coordinator to rank,
// rank to coordinator, each ring link), built to tell a slow peer from a dead one:
//
// - Anything arriving counts: a ping, a pong, a message, or just bytes read by the socket. A peer whose
//   pong sits behind a 4 MiB summary in its own TCP stream is still sending that summary (on a 100 Mbit
//   LAN that took longer than the old fixed 1.2 s, and the coordinator cut a healthy rank). A frozen
//   (SIGSTOPped) peer's kernel drains at most its socket buffer, so it is still caught, a buffer later.
// - Both ends ping on their own: a heartbeat never waits for a request that queued behind bulk data.
// - Our own stalls do not count as the peer's silence: time only counts while this event loop was able to
//   listen (a tick that comes late, because the CPU was taken, adds at most one interval and a half), and
//   the verdict is taken after the poll phase has read whatever arrived meanwhile.
// - The limit adapts: it is at least `timeoutMs`, and grows to twice the longest gap heard recently plus an
//   interval (a saturated link that drops a heartbeat costs a TCP retransmission, 200 ms and up), but never
//   past `maxTimeoutMs`, which bounds how long a dead peer takes to be named.
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface LivenessTiming {
  intervalMs: number; // ping this often, and look this often
  timeoutMs: number; // silence that means lost, on a quiet link (the floor of the adaptive limit)
  maxTimeoutMs: number; // the ceiling of the adaptive limit
}

/** The defaults: a frozen peer on a quiet link is named in about 1.5 s, on a loaded one in at most ~4.5 s. */
export const LIVENESS: LivenessTiming = { intervalMs: 300, timeoutMs: 1200, maxTimeoutMs: 4000 };

/** The timing for a given floor (`--heartbeat-timeout`): ping four times within it, cap at 10/3 of it (at least the default cap). */
export function livenessFor(timeoutMs: number): LivenessTiming {
  return {
    intervalMs: Math.max(50, Math.round(timeoutMs / 4)),
    timeoutMs,
    maxTimeoutMs: Math.max(timeoutMs, Math.round((timeoutMs * LIVENESS.maxTimeoutMs) / LIVENESS.timeoutMs)),
  };
}

/** How many of the most recent gaps the adaptive limit remembers. */
const GAP_MEMORY = 32;

export interface LivenessProbe {
  /** The connection's socket, whose byte counter shows progress below message level (null: none yet). */
  socket: () => Socket | null;
  /** Send a heartbeat (a WebSocket ping) if the connection is open. */
  ping: () => void;
  /** The peer has been silent for `silentMs` of listening, past the limit `limitMs`. Called once. */
  lost: (silentMs: number, limitMs: number) => void;
  /** Whether silence counts now (the coordinator's members only once the run runs); default always. */
  armed?: () => boolean;
}

export class Liveness {
  private timer: NodeJS.Timeout | null = null;
  private lastTick = performance.now();
  private silence = 0; // ms of listening since the peer was last heard
  private heardSinceTick = false;
  private bytesSeen = -1;
  private readonly gaps: number[] = [];
  private stopped = false;

  constructor(
    private readonly timing: LivenessTiming,
    private readonly probe: LivenessProbe,
  ) {}

  /** Start pinging and watching. */
  start(): this {
    if (this.timer || this.stopped) return this;
    this.lastTick = performance.now();
    this.bytesSeen = this.probe.socket()?.bytesRead ?? -1;
    this.timer = setInterval(() => this.tick(), this.timing.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Something arrived from the peer (a message, a ping, a pong). */
  heard(): void {
    this.heardSinceTick = true;
  }

  /** The silence the peer is allowed now, in ms. */
  get limitMs(): number {
    const longest = this.gaps.reduce((a, b) => Math.max(a, b), 0);
    const { intervalMs, timeoutMs, maxTimeoutMs } = this.timing;
    return Math.round(Math.min(maxTimeoutMs, Math.max(timeoutMs, 2 * longest + intervalMs)));
  }

  /** What has been heard since the last look: a message or heartbeat, or bytes on the socket. */
  private progressed(): boolean {
    const bytes = this.probe.socket()?.bytesRead ?? -1;
    const moved = bytes !== this.bytesSeen;
    this.bytesSeen = bytes;
    const heard = this.heardSinceTick || moved;
    this.heardSinceTick = false;
    return heard;
  }

  private tick(): void {
    const now = performance.now();
    // A late tick means this process could not run: count at most an interval and a half of it.
    const listened = Math.min(now - this.lastTick, 1.5 * this.timing.intervalMs);
    this.lastTick = now;
    if (this.progressed()) {
      if (this.silence > 0) this.remember(this.silence + listened / 2);
      this.silence = 0;
    } else this.silence += listened;
    const limit = this.limitMs;
    if (this.silence > limit && this.probe.armed?.() === false) this.silence = 0;
    if (this.silence > limit) {
      // Timers run before the poll phase: let it read what may be waiting before the verdict.
      setImmediate(() => {
        if (this.stopped) return;
        if (this.progressed()) {
          this.remember(this.silence);
          this.silence = 0;
          return;
        }
        this.stop();
        this.probe.lost(Math.round(this.silence), limit);
      });
      return;
    }
    this.probe.ping();
  }

  private remember(gap: number): void {
    this.gaps.push(gap);
    if (this.gaps.length > GAP_MEMORY) this.gaps.shift();
  }
}
