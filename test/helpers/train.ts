// Train one scheme on N in-process ranks joined by real loopback sockets, and a plain single-process
// full-batch Adam reference to compare against.
import { REAL_VALUES } from '../../shared/training/values.js';
import { adamUpdate, type AdamHyper } from '../../shared/training/adam.js';
import type { WireDtype } from '../../shared/tensor/dtype.js';
import { ShardLayout, type LayoutSizes } from '../../shared/training/layout.js';
import { persistedLayout, persistedSizes } from '../../shared/training/persisted-layout.js';
import { MlpSpec } from '../../shared/models/mlp/mlp.js';
import type { SchemeName, UnitMode } from '../../shared/control/run-config.js';
import type { Base, StepStats } from '../../shared/training/schemes/base.js';
import { SCHEME_CLASSES } from '../../shared/training/schemes/index.js';
import { SCHEME_TABLE } from '../../shared/training/schemes/table.js';
import { heapBytes } from '../../shared/accounting/theory.js';
import { WasmHeap } from '../../shared/tensor/heap.js';
import { MemoryLedger } from '../../shared/tensor/memory-ledger.js';
import { closeAll, localRings, type LocalRank } from './rings.js';
import type { Compute } from '../../shared/training/compute.js';
import { GptSpec, type GptShape } from '../../shared/models/gpt/spec.js';
import { arenaModel, inlineCompute, trainingData, type ModelSpec } from '../../shared/models/registry.js';

export interface TrainSetup {
  widths: number[]; // the MLP's, unless `gpt` is given
  gpt?: GptShape;
  steps: number;
  batch: number;
  samples: number;
  seed: number;
  dtype: WireDtype;
  unit: UnitMode;
  hyper: AdamHyper;
  gatherAhead?: number;
  reduceBehind?: number;
  overlap?: boolean; // default true, as in a run
  bucketBytes?: number; // DP/ZeRO-1 bucket cap (default DDP's 25 MiB)
  accumulate?: number; // micro-batches per optimizer step
  persist?: number; // ZeRO-3: DeepSpeed's persistence threshold, elements
  regather?: boolean[]; // ZeRO-3 under recompute: units gathered again after their recompute (DeepSpeed's)
  compute?: (spec: ModelSpec) => Compute; // default: inline
}

export const HYPER: AdamHyper = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8 };

export interface TrainResult {
  losses: number[]; // global mean loss per step
  final: Float32Array; // assembled unpadded fp32 master weights
  stats: StepStats[][]; // [rank][step]
  ranks: LocalRank[];
  schemes: Base[];
  layouts: ShardLayout[];
}

const specOf = (s: TrainSetup): ModelSpec => (s.gpt ? new GptSpec(s.gpt) : new MlpSpec(s.widths));

/** A layout's sizes as the theory takes them under `scheme`, with the persisted tensors where it gathers. */
export function sizesWith(layout: ShardLayout, scheme: SchemeName, persist?: number): LayoutSizes {
  const sizes = layout.sizes();
  if (!persist || !SCHEME_TABLE[scheme].shardParameters) return sizes;
  return { ...sizes, persisted: persistedSizes(persistedLayout(layout, persist)) };
}

export async function trainDistributed(world: number, scheme: SchemeName, s: TrainSetup): Promise<TrainResult> {
  const spec = specOf(s);
  const theta0 = spec.init(s.seed);
  const data = trainingData(spec, s);
  const ranks = await localRings(world, { chunkBytes: 4096 });
  let computes: Compute[] = [];
  try {
    const layouts = ranks.map((_, r) => new ShardLayout(spec, world, r, s.unit));
    // Each rank's bands in a WebAssembly heap sized as a rank sizes it, so the kernels run as they do there.
    for (const [r, rk] of ranks.entries()) {
      rk.ledger = new MemoryLedger(
        WasmHeap.create(
          heapBytes(SCHEME_TABLE[scheme], sizesWith(layouts[r], scheme, s.persist), s.dtype, {
            gatherAhead: s.gatherAhead ?? 0,
            reduceBehind: s.reduceBehind ?? 0,
            accumulate: s.accumulate,
          }),
        ),
      );
      rk.coll.useLedger(rk.ledger);
    }
    computes = ranks.map(() => (s.compute ? s.compute(spec) : inlineCompute(spec)));
    const schemes = ranks.map((rk, r) =>
      new SCHEME_CLASSES[scheme]().setup({
        layout: layouts[r],
        coll: rk.coll,
        ledger: rk.ledger,
        hyper: s.hyper,
        dtype: s.dtype,
        theta0,
        values: REAL_VALUES,
        gatherAhead: s.gatherAhead,
        reduceBehind: s.reduceBehind,
        persist: s.persist,
        regather: s.regather,
        overlap: s.overlap,
        bucketBytes: s.bucketBytes,
        accumulate: s.accumulate,
        compute: computes[r],
      }),
    );
    const stats: StepStats[][] = ranks.map(() => []);
    const losses: number[] = [];
    for (let t = 0; t < s.steps; t++) {
      const st = await Promise.all(schemes.map((sc, r) => sc.step(data.rankBatch(t, s.batch, r, world))));
      st.forEach((x, r) => stats[r].push(x));
      losses.push(st.reduce((a, x) => a + x.loss, 0) / world);
    }
    const states = schemes.map((sc) => sc.masterState());
    const final = states[0].sharded ? layouts[0].assemble(states.map((x) => x.data)) : layouts[0].unpad(states[0].data);
    return { losses, final, stats, ranks, schemes, layouts };
  } finally {
    await Promise.all(computes.map((c) => c.close()));
    await closeAll(ranks);
  }
}

/** Single process, full batch, fp32: what every scheme with an fp32 wire must reproduce. */
export function trainReference(s: TrainSetup): { losses: number[]; final: Float32Array } {
  const spec = specOf(s);
  const theta = spec.init(s.seed);
  const data = trainingData(spec, s);
  const model = arenaModel(spec, 1, false); // the model's own passes on one thread
  const m = new Float32Array(spec.params);
  const v = new Float32Array(spec.params);
  const losses: number[] = [];
  for (let t = 0; t < s.steps; t++) {
    const b = data.rankBatch(t, s.batch, 0, 1);
    const grad = new Float32Array(spec.params);
    const loss = model.lossAndGradient(theta, b.x, b.rows, b.y, grad);
    adamUpdate(theta, m, v, grad, t + 1, s.hyper);
    losses.push(loss);
  }
  return { losses, final: theta };
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
