// The compute thread's main: runs ComputeState for one rank, one request at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { ComputeState, type ComputeReply, type ComputeRequest } from '../shared/training/compute.js';
import { MlpSpec } from '../shared/training/mlp.js';

const state = new ComputeState(new MlpSpec(workerData.widths as number[]));
parentPort!.on('message', (req: ComputeRequest) => {
  let reply: ComputeReply;
  try {
    reply = state.handle(req);
  } catch (err) {
    reply = { ok: false, error: (err as Error).message };
  }
  // The gradient's buffer moves to the rank without a copy.
  parentPort!.postMessage(reply, reply.ok && reply.grad ? [reply.grad.buffer as ArrayBuffer] : []);
});
