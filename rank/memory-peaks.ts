// A scheme's memory over its steps, from the ledger and the process: what is resident between steps, the
// worst moment of model states, every band's own peak, the worst moment of everything, and the process's
// own figure at its worst.
import type { SchemeSummary } from '../shared/control/messages.js';
import type { MemoryLedger } from '../shared/tensor/memory-ledger.js';

export class MemoryPeaks {
  private readonly resident: Record<string, number>;
  private peak = 0;
  private peakBands: Record<string, number>;
  private readonly peakPerBand: Record<string, number>;
  private peakAll: number;
  private peakAllBands: Record<string, number>;
  private processPeak: number;

  /** Starts from what the ledger holds now (the scheme set up, no step run) and the process before the scheme. */
  constructor(
    private readonly ledger: MemoryLedger,
    private readonly processBefore: number,
  ) {
    this.resident = { ...ledger.live };
    this.peakBands = { ...ledger.live };
    this.peakPerBand = { ...ledger.live };
    this.peakAll = ledger.totalBytes();
    this.peakAllBands = { ...ledger.live };
    this.processPeak = processBefore;
  }

  /** After a step: the ledger's peaks of that step, and the process's highest sample. */
  observe(processBytesPeak: number): void {
    const l = this.ledger;
    if (l.peak > this.peak) {
      this.peak = l.peak;
      this.peakBands = { ...l.peakBands };
    }
    for (const [band, bytes] of Object.entries(l.peakPerBand)) this.peakPerBand[band] = Math.max(this.peakPerBand[band] ?? 0, bytes);
    if (l.peakAll > this.peakAll) {
      this.peakAll = l.peakAll;
      this.peakAllBands = { ...l.peakAllBands };
    }
    this.processPeak = Math.max(this.processPeak, processBytesPeak);
  }

  summary(): SchemeSummary['memory'] {
    const { resident, peak, peakBands, peakPerBand, peakAll, peakAllBands, processBefore, processPeak } = this;
    return { resident, peak, peakBands, peakPerBand, peakAll, peakAllBands, processBefore, processPeak };
  }
}
