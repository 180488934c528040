// What a modeled-compute rank "trains" on: nothing but the batch's row count. The compute takes its time
// from the rows; there are no inputs, labels or tokens (a 128k vocabulary needs none).
import type { Batch, DumpedData, TrainingData } from '../training/data.js';

export class ModeledData implements TrainingData {
  readonly bytes = 0;

  globalRows(_step: number, batch: number): Int32Array {
    return new Int32Array(batch);
  }

  rankBatch(_step: number, batch: number, _rank: number, world: number): Batch {
    return { x: new Float32Array(0), y: new Int32Array(0), rows: batch / world };
  }

  dumped(): DumpedData {
    return { tensors: [], meta: { note: 'modeled compute: no data exists' } };
  }

  gather(rows: Int32Array): Batch {
    return { x: new Float32Array(0), y: new Int32Array(0), rows: rows.length };
  }
}
