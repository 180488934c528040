// What computes a rank's forward and backward passes in the mode it resolved: the kernels on its own thread
// or on a worker thread, or a modeled accelerator's time (--compute model:PRESET), and the data it needs.
import type { ComputeMode, RunConfig } from '../shared/control/run-config.js';
import type { Compute } from '../shared/training/compute.js';
import type { TrainingData } from '../shared/training/data.js';
import { inlineCompute, trainingData, type ModelSpec } from '../shared/training/model.js';
import { ModeledCompute } from '../shared/whatif/modeled-compute.js';
import { ModeledData } from '../shared/whatif/modeled-data.js';
import { runDevice } from '../shared/whatif/preset.js';
import { WorkerCompute } from './worker-compute.js';

const MODEL_PREFIX = 'model:';

export function rankCompute(mode: ComputeMode, spec: ModelSpec, threads: number, c: Pick<RunConfig, 'recompute' | 'tflops' | 'mfu'>): Compute {
  const recompute = c.recompute ?? false;
  if (mode.startsWith(MODEL_PREFIX)) return new ModeledCompute(spec, runDevice({ ...c, compute: mode }).cost, recompute);
  return mode === 'thread' ? new WorkerCompute(spec, threads, undefined, recompute) : inlineCompute(spec, threads, recompute);
}

/** The data set, or (modeled compute) only the rows. */
export function rankData(mode: ComputeMode, spec: ModelSpec, c: Pick<RunConfig, 'samples' | 'seed'>): TrainingData {
  return mode.startsWith(MODEL_PREFIX) ? new ModeledData() : trainingData(spec, c);
}
