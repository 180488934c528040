// The live progress line: step, loss and bytes/s of the scheme that is running.
import type { Logger } from 'pino';
import type { StepMetrics } from '../shared/control/messages.js';
import type { SchemeName } from '../shared/control/run-config.js';
import { schemeTitle } from '../shared/training/schemes/table.js';

export class ProgressLine {
  private readonly tty = Boolean(process.stderr.isTTY);
  private losses: number[] = [];
  private bytes = 0;
  private ms = 0;
  private scheme: SchemeName | null = null;
  private shown = false;

  constructor(
    public world: number, // known once the coordinator has settled it
    private readonly steps: number,
  ) {}

  update(scheme: SchemeName, step: number, ranksDone: number, m: StepMetrics, log: Logger): void {
    if (scheme !== this.scheme) {
      this.scheme = scheme;
      this.losses = [];
    }
    if (m.loss !== null) this.losses.push(m.loss);
    this.bytes += m.sent.payload;
    this.ms += m.stepMs;
    if (ranksDone < this.world) return; // report a step once every rank has finished it
    const loss = this.losses.length ? this.losses.reduce((a, b) => a + b, 0) / this.losses.length : null;
    this.losses = [];
    const rate = this.ms > 0 ? (this.bytes / this.ms) * 1000 : 0;
    this.bytes = 0;
    this.ms = 0;
    const text = `${schemeTitle(scheme)} step ${step + 1}/${this.steps}  loss ${loss === null ? 'not computed (modeled)' : loss.toFixed(4)}  ${(rate / 1e6).toFixed(1)} MB/s sent per rank`;
    if (this.tty) {
      process.stderr.write(`\r\x1b[2K${text}`);
      this.shown = true;
    } else if (step === 0 || step + 1 === this.steps || (step + 1) % 10 === 0) {
      log.info({ scheme, step: step + 1, loss, bytesPerSecond: Math.round(rate) }, text);
    }
  }

  clear(): void {
    if (this.shown) process.stderr.write('\r\x1b[2K');
    this.shown = false;
  }
}
