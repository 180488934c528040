// The MLP's data: a seeded synthetic classification set, labelled by a fixed random teacher network (a small
// MLP of its own) so the loss can fall.
import { EpochOrder, int64, type Batch, type DumpedData, type TrainingData } from '../../training/data.js';
import { Rng } from '../../training/rng.js';
import { Mlp, MlpSpec } from './mlp.js';

export class MlpData implements TrainingData {
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

  dumped(): DumpedData {
    return {
      tensors: [
        ['x', { dtype: 'F32', shape: [this.samples, this.inputs], data: this.x }],
        ['y', { dtype: 'I64', shape: [this.samples], data: int64(this.y) }],
      ],
      meta: { note: 'step t trains on rows batch_rows[t]; rank r of N takes the contiguous r-th 1/N of them; loss is the mean over the global batch' },
    };
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
