// The compute thread's main: one rank's model, one request at a time, tensors through shared staging
// (see worker-compute.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { arenaModel, batchRow, modelSpec } from '../shared/models/registry.js';
import type { RunConfig } from '../shared/control/run-config.js';
import { batchStaging, layerStaging, type ThreadReply, type ThreadRequest } from './worker-compute.js';
import { loadedSize } from '../shared/training/param-group.js';

const spec = modelSpec(workerData as Pick<RunConfig, 'model' | 'adapt'>);
const model = arenaModel(spec, workerData.threads as number, workerData.recompute as boolean);
await model.ready();
const row = batchRow(spec);
const largest = Math.max(...spec.layers.map(loadedSize));
let layerBuf: SharedArrayBuffer | null = null;
let batchBuf: SharedArrayBuffer | null = null;
let rows = 0;

function params(layer: number, bf16: boolean): Float32Array | Uint16Array {
  const s = layerStaging(layerBuf!, largest);
  const n = loadedSize(spec.layers[layer]);
  return bf16 ? s.bf16.subarray(0, n) : s.f32.subarray(0, n);
}

function handle(req: ThreadRequest): ThreadReply {
  switch (req.op) {
    case 'staging':
      layerBuf = req.layer;
      batchBuf = req.batch;
      return { ok: true };
    case 'start':
      rows = req.rows;
      model.start(batchStaging(batchBuf!, row, rows).x, rows);
      return { ok: true, arenaBytes: model.bytes, activationBytes: model.activationBytes };
    case 'forward':
      model.forward(req.layer, params(req.layer, req.bf16));
      return { ok: true };
    case 'loss':
      return { ok: true, loss: model.loss(batchStaging(batchBuf!, row, rows).y, req.gradScale) };
    case 'backward': {
      const n = loadedSize(spec.layers[req.layer]) - spec.layers[req.layer].frozen; // the trainable rest's gradient (and a borrowed weight's)
      model.backward(req.layer, params(req.layer, req.bf16), layerStaging(layerBuf!, largest).grad.subarray(0, n));
      return { ok: true };
    }
  }
}

parentPort!.on('message', (req: ThreadRequest) => {
  let reply: ThreadReply;
  try {
    reply = handle(req);
  } catch (err) {
    reply = { ok: false, error: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
