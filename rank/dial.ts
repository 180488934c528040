// Dialling the coordinator: retried until it is up (containers start in any order) or the timeout passes,
// and cut at once when the rank is stopped.
import type { Logger } from 'pino';
import { WebSocket } from 'ws';

export interface DialOptions {
  coordinator: string; // ws://host:port
  connectTimeoutMs: number;
  ca?: Buffer; // trust this CA for a wss:// coordinator
}

export class Dialler {
  private dialing: WebSocket | null = null;
  private wake: (() => void) | null = null;
  private stopped = false;

  constructor(
    private readonly opts: DialOptions,
    private readonly log: Logger,
  ) {}

  /** The attempt in flight is cut and the retry loop stops. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
    this.dialing?.terminate();
  }

  async dial(): Promise<WebSocket> {
    const { coordinator, connectTimeoutMs } = this.opts;
    const deadline = Date.now() + connectTimeoutMs;
    const stoppedError = () => new Error(`stopped before reaching the coordinator at ${coordinator}`);
    let told = false;
    for (;;) {
      if (this.stopped) throw stoppedError();
      try {
        return await this.attempt();
      } catch (err) {
        this.dialing = null;
        if (this.stopped) throw stoppedError();
        const last = (err as Error).message;
        // Not worth retrying: a malformed address, or a certificate we do not trust.
        if (/Invalid URL|invalid url|protocol|certificate|self.signed|SSL|TLS/i.test(last))
          throw new Error(`--coordinator ${coordinator}: ${last}`, { cause: err });
        if (Date.now() + 500 > deadline)
          throw new Error(`cannot reach the coordinator at ${coordinator} within ${connectTimeoutMs} ms: ${last}`, { cause: err });
        if (!told) this.log.info({ err: last }, `waiting for the coordinator at ${coordinator} (retrying for up to ${Math.round(connectTimeoutMs / 1000)} s)`);
        told = true;
        await new Promise<void>((r) => {
          this.wake = r;
          setTimeout(r, 500);
        });
      }
    }
  }

  private attempt(): Promise<WebSocket> {
    return new Promise<WebSocket>((resolve, reject) => {
      const ws = (this.dialing = new WebSocket(this.opts.coordinator, {
        perMessageDeflate: false,
        handshakeTimeout: Math.max(1000, this.opts.connectTimeoutMs),
        // A zero mask, which ws then skips applying: masking guards proxies' caches against scripts in a
        // browser (RFC 6455 10.3), which is not who talks here, and XOR-ing a DP summary (4 bytes per
        // parameter) in JavaScript kept a rank deaf to heartbeats for over a second.
        generateMask: (mask: Buffer) => mask.fill(0),
        ...(this.opts.ca ? { ca: this.opts.ca } : {}),
      }));
      ws.once('open', () => {
        this.dialing = null; // from here on the session says goodbye properly
        ws.removeAllListeners('error');
        resolve(ws);
      });
      ws.once('error', reject);
    });
  }
}
