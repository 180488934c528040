// What a rank trains on (each model's data: models/<name>/), and the order in which its rows are served:
// step t takes global rows [t*B, (t+1)*B) of a stream of seeded epoch permutations, and rank r takes its own
// contiguous B/N of them.
import { Rng } from './rng.js';

export interface Batch {
  x: Float32Array; // rows of inputs (the MLP), or of token ids (the GPT)
  y: Int32Array; // a label per row, or a target per token
  rows: number;
}

/** Micro-batch `k` of `parts`: consecutive rows of `b` (rows must divide by parts). */
export function microBatch(b: Batch, k: number, parts: number): Batch {
  if (parts === 1) return b;
  const rows = b.rows / parts;
  if (!Number.isInteger(rows)) throw new RangeError(`${b.rows} rows do not divide into ${parts} micro-batches`);
  const xr = b.x.length / b.rows;
  const yr = b.y.length / b.rows;
  return { x: b.x.subarray(k * rows * xr, (k + 1) * rows * xr), y: b.y.subarray(k * rows * yr, (k + 1) * rows * yr), rows };
}

/** What a rank trains on, and in which order. */
export interface TrainingData {
  readonly bytes: number; // what the data set holds
  globalRows(step: number, batch: number): Int32Array;
  rankBatch(step: number, batch: number, rank: number, world: number): Batch;
  gather(rows: Int32Array): Batch;
  /** The data set as --dump writes it (io/dump.ts): its tensors, and how a sample and its targets are read. */
  dumped(): DumpedData;
}

/** A data set's tensors for a dump, and what to say about them. */
export interface DumpedData {
  tensors: [name: string, tensor: { dtype: 'F32' | 'I64'; shape: number[]; data: Float32Array | BigInt64Array }][];
  meta: { note: string } & Record<string, string>;
}

/** Integer ids as the I64 a dump stores (torch's index type). */
export const int64 = (a: Int32Array): BigInt64Array => BigInt64Array.from(a, (v) => BigInt(v));

/** The order samples are served in: a stream of seeded epoch permutations; step t takes positions
 *  [t*B, (t+1)*B) and rank r its contiguous r-th B/N of them. */
export class EpochOrder {
  private readonly epochs = new Map<number, Int32Array>();

  constructor(
    readonly samples: number,
    readonly seed: number,
  ) {}

  /** Sample indices of the global batch of step t. */
  globalRows(step: number, batch: number): Int32Array {
    const out = new Int32Array(batch);
    for (let k = 0; k < batch; k++) {
      const pos = step * batch + k;
      out[k] = this.epoch(Math.floor(pos / this.samples))[pos % this.samples];
    }
    return out;
  }

  /** The samples rank `rank` trains on at step t. */
  rankRows(step: number, batch: number, rank: number, world: number): Int32Array {
    if (batch % world !== 0) throw new RangeError(`global batch ${batch} does not divide evenly over ${world} ranks`);
    const per = batch / world;
    return this.globalRows(step, batch).subarray(rank * per, (rank + 1) * per);
  }

  private epoch(e: number): Int32Array {
    let p = this.epochs.get(e);
    if (!p) {
      p = new Rng((this.seed + 0x9e37 * (e + 1)) >>> 0).permutation(this.samples);
      this.epochs.set(e, p);
      for (const old of this.epochs.keys()) if (old < e - 1) this.epochs.delete(old); // rows never go back further
    }
    return p;
  }
}
