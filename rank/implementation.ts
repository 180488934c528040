// Real or what-if: the pieces that differ between a rank that computes on values and one whose compute a
// modeled accelerator stands for (--compute model:PRESET). Chosen once, by the rank's assembly; nothing
// downstream asks which it has.
import type { RunPlan } from '../shared/accounting/run-plan.js';
import { Collectives, type CollectiveOptions } from '../shared/collectives/collectives.js';
import type { ComputeMode, RunConfig, SchemeName } from '../shared/control/run-config.js';
import { WasmHeap } from '../shared/tensor/heap.js';
import { MemoryLedger } from '../shared/tensor/memory-ledger.js';
import { touchPages } from '../shared/tensor/wasm/memories.js';
import type { Compute } from '../shared/training/compute.js';
import type { TrainingData } from '../shared/training/data.js';
import { gpuModel, inlineCompute, trainingData, type ModelSpec } from '../shared/models/registry.js';
import { REAL_VALUES, type Values } from '../shared/training/values.js';
import type { Ring } from '../shared/transport/ring.js';
import { ModeledCompute } from '../shared/whatif/modeled-compute.js';
import { ModeledData } from '../shared/whatif/modeled-data.js';
import { NO_VALUES } from '../shared/whatif/no-values.js';
import { runDevice } from '../shared/whatif/preset.js';
import { SyntheticCollectives } from '../shared/whatif/synthetic-collectives.js';
import { WorkerCompute } from './worker-compute.js';

export interface Implementation {
  /** Conversions and Adam. */
  values: Values;
  /** The collectives over a ring. */
  collectives(ring: Ring, opts: CollectiveOptions): Collectives;
  /** Where a scheme's bands live. */
  ledger(plan: RunPlan, scheme: SchemeName): Promise<MemoryLedger>;
  /** What computes forward and backward, made for each scheme. */
  compute(spec: ModelSpec, threads: number, c: Pick<RunConfig, 'recompute' | 'tflops' | 'mfu' | 'device' | 'offload'>): Compute;
  /** The data set. */
  data(spec: ModelSpec, c: Pick<RunConfig, 'samples' | 'seed'>): TrainingData;
}

/** On values: bands in a WebAssembly heap, the ring collectives, compute inline or on a worker thread. */
function realImplementation(mode: 'inline' | 'thread'): Implementation {
  return {
    values: REAL_VALUES,
    collectives: (ring, opts) => new Collectives(ring, opts),
    async ledger(plan, scheme) {
      const heap = WasmHeap.create(plan.heapBytes(scheme));
      if (heap) await touchPages(heap.memory); // its pages mapped now, with heartbeats between, not in the first step
      return new MemoryLedger(heap);
    },
    compute: (spec, threads, c) => (mode === 'thread' ? new WorkerCompute(spec, threads, undefined, c.recompute) : inlineCompute(spec, threads, c.recompute)),
    data: (spec, c) => trainingData(spec, c),
  };
}

/** A modeled accelerator's: bands are extents (sizes without values), frames carry meaningless bytes of the
 *  real sizes, each layer takes the cost model's time, the data is only its rows. */
function whatIfImplementation(mode: ComputeMode): Implementation {
  return {
    values: NO_VALUES,
    collectives: (ring, opts) => new SyntheticCollectives(ring, opts),
    ledger: () => Promise.resolve(new MemoryLedger(null, true)),
    compute: (spec, _threads, c) => {
      const { device, cost } = runDevice({ ...c, compute: mode });
      const host = c.offload ? { linkGBps: device.hostLinkGBps, adamGparams: c.offload.hostAdamGparams! } : null; // the rate: given, or measured at launch
      return new ModeledCompute(gpuModel(spec), cost, c.recompute, host);
    },
    data: () => new ModeledData(),
  };
}

export function implementationFor(mode: ComputeMode, modeled: boolean): Implementation {
  return modeled ? whatIfImplementation(mode) : realImplementation(mode === 'thread' ? 'thread' : 'inline');
}
