// A seeded synthetic classification set, labelled by a fixed random teacher network so the loss can fall,
// and the order in which its rows are served: step t takes global rows [t*B, (t+1)*B) of a stream of
// seeded epoch permutations, and rank r takes its own contiguous B/N of them.
import { Mlp, MlpSpec } from './mlp.js';
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
}

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

export class SyntheticData implements TrainingData {
  readonly x: Float32Array;
  readonly y: Int32Array;
  private readonly order: EpochOrder;

  constructor(
    readonly inputs: number,
    readonly classes: number,
    readonly samples: number,
    readonly seed: number,
  ) {
    this.order = new EpochOrder(samples, seed);
    const rng = new Rng(seed ^ 0x5eed);
    this.x = new Float32Array(samples * inputs);
    for (let i = 0; i < this.x.length; i++) this.x[i] = rng.normal();
    // The teacher: a small random GELU network; a label is the argmax of its output.
    const teacher = new MlpSpec([inputs, 32, classes]);
    const theta = teacher.init(seed ^ 0x7eac4e2);
    const mlp = new Mlp(teacher);
    mlp.start(this.x, samples);
    for (const l of teacher.layers) mlp.forward(l.index, theta.subarray(l.offset, l.offset + l.size));
    const logits = mlp.pre(teacher.layers.length - 1);
    this.y = new Int32Array(samples);
    for (let r = 0; r < samples; r++) {
      let best = 0;
      for (let c = 1; c < classes; c++) if (logits[r * classes + c] > logits[r * classes + best]) best = c;
      this.y[r] = best;
    }
  }

  get bytes(): number {
    return this.x.byteLength + this.y.byteLength;
  }

  /** Data-set row indices of the global batch of step t. */
  globalRows(step: number, batch: number): Int32Array {
    return this.order.globalRows(step, batch);
  }

  /** The rows rank `rank` trains on at step t. */
  rankBatch(step: number, batch: number, rank: number, world: number): Batch {
    return this.gather(this.order.rankRows(step, batch, rank, world));
  }

  gather(rows: Int32Array): Batch {
    const x = new Float32Array(rows.length * this.inputs);
    const y = new Int32Array(rows.length);
    rows.forEach((row, i) => {
      x.set(this.x.subarray(row * this.inputs, (row + 1) * this.inputs), i * this.inputs);
      y[i] = this.y[row];
    });
    return { x, y, rows: rows.length };
  }
}
