// A what-if rank's collectives (--compute model:...): the real schedule, segment sizes and frames, carrying
// bytes that mean nothing, each segment cut to 1/linkScale. The rank's assembly (rank/assembly.ts) picks
// these where the run models its compute; nothing else asks whether values exist.
import { Collectives } from '../collectives/collectives.js';
import { Chunks } from '../collectives/chunks.js';
import type { Tally } from '../collectives/record.js';
import { dtypeOf, type Elems, type WireDtype } from '../tensor/dtype.js';
import { SyntheticPayload, syntheticPhase } from './synthetic.js';

export class SyntheticCollectives extends Collectives {
  /** What every frame carries: a view of zeros. */
  private readonly synthetic = new SyntheticPayload();

  protected override allReduceRing(tally: Tally, buf: Elems, shardLen: number, steps: number): Promise<void> {
    return this.runSynthetic(tally, shardLen, dtypeOf(buf), steps);
  }

  protected override reduceScatterRing(tally: Tally, _input: Elems, _output: Elems, S: number, dtype: WireDtype): Promise<void> {
    return this.runSynthetic(tally, S, dtype, this.world - 1);
  }

  protected override allGatherRing(tally: Tally, _input: Elems, _output: Elems, S: number, dtype: WireDtype, coll?: number): Promise<void> {
    return this.runSynthetic(tally, S, dtype, this.world - 1, S, coll);
  }

  protected override shiftRing(tally: Tally, input: Elems, output: Elems, coll?: number): Promise<void> {
    return this.runSynthetic(tally, output.length, dtypeOf(output), 1, input.length, coll);
  }

  /** The real algorithm's frames for a segment of S elements (scaled by linkScale); a shift sends `sent`
   *  (its own input's length), which may differ from what it receives. */
  private runSynthetic(tally: Tally, S: number, dtype: WireDtype, steps: number, sent = S, coll?: number): Promise<void> {
    const cut = (n: number) => new Chunks(Math.ceil(n / (this.opts.linkScale ?? 1)), this.opts.chunkBytes, dtype);
    const chunks = cut(S);
    return this.run(tally, chunks, steps, syntheticPhase(this.seat(), chunks, steps, this.synthetic, cut(sent)), coll);
  }
}
