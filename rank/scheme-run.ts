// One scheme on one rank, start to finish: allocate its bands, (resume,) train every step, report each step,
// checkpoint when asked, and summarise what was measured.
import { loopLagMeter } from './loop-lag.js';
import type { Logger } from 'pino';
import { readRankShard, writeRankShard, type WrittenShard } from '../shared/io/checkpoint.js';
import { readStateFor } from '../shared/io/reshard.js';
import type { Collectives } from '../shared/collectives/collectives.js';
import type { Compute } from '../shared/training/compute.js';
import type { TrainingData } from '../shared/training/data.js';
import { ShardLayout } from '../shared/training/layout.js';
import type { ClockEstimate } from '../shared/accounting/clock.js';
import type { RunPlan } from '../shared/accounting/run-plan.js';
import type { MemoryLedger } from '../shared/tensor/memory-ledger.js';
import { bufferBytes } from '../shared/tensor/wasm/memories.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { componentsOf, schemeTitle } from '../shared/training/schemes/table.js';
import type { SchemeSummary, StepMetrics } from '../shared/control/messages.js';
import type { ComputeMode, SchemeName } from '../shared/control/run-config.js';
import { MemoryPeaks } from './memory-peaks.js';
import { productsBackend } from '../shared/tensor/blas.js';
import { schemeClass } from '../shared/training/schemes/index.js';
import type { HybridRings } from './hybrid-rings.js';
import { allRings, linkCipher, trainingRings, zeroPPContext } from './scheme-rings.js';
import { countedSince, countersNow } from './scheme-counters.js';
import { stepMetrics } from './step-metrics.js';
import type { Base } from '../shared/training/schemes/base.js';
import { weightParts } from '../shared/accounting/final-weights.js';
import { turn } from '../shared/time/clock.js';
import type { Implementation } from './implementation.js';

export interface SchemeRun {
  scheme: SchemeName;
  plan: RunPlan; // the run, resolved once: model, layout, theory
  coll: Collectives; // the run's ring
  hybrid?: HybridRings; // the hybrid's sub-rings, hpZ's group ring, qgZ's stride rings (when the run has them)
  data: TrainingData;
  compute: Compute;
  computeMode: ComputeMode; // where `compute` runs, for the report
  impl: Pick<Implementation, 'values' | 'ledger'>; // real or what-if (assembly.ts)
  log: Logger;
  iface?: string; // report this interface's kernel counters ('auto': the one the ring uses)
  controlBytes?: () => number; // bytes written so far to the coordinator (its share of the interface's count)
  clock: () => ClockEstimate; // this rank's offset from the coordinator's clock
  resyncClock: () => Promise<void>; // estimate it again (clocks drift over a long run)
  straggleMs: number; // idle this long before every step (--straggle-ms)
  collect?: boolean; // a full collection before the scheme (default); off where one process holds many ranks (simulate)
  loopLag?: boolean; // time the event loop's hold-ups per step (default); off where the loop is not the rank's (simulate)
  onStep: (m: StepMetrics) => void;
  onCheckpoint: (step: number, written: WrittenShard) => void;
}

let gc: (() => void) | null = null;
/** A full collection on demand, as Node's documentation of v8.setFlagsFromString shows it. The flag is set
 *  the first time a collection is asked for, not when this file is imported. */
function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** During a long scheme the clock offset is estimated again this often: quartz clocks drift apart by up
 *  to ~50 ppm, 1.5 ms in 30 s, already more than the estimate's uncertainty (tenths of a millisecond). */
const CLOCK_RESYNC_MS = 30_000;

/** The scheme's bands allocated and its initial weights loaded, or its state from a checkpoint. */
async function startScheme(run: SchemeRun, layout: ShardLayout, ledger: MemoryLedger): Promise<Base> {
  const { scheme, compute, log } = run;
  const { coll, cross, host, strides } = trainingRings(run);
  const c = run.plan.config;
  const ring = run.coll.ring; // the run's: this rank's global id
  const theta0 = run.plan.theta0(); // made when the rank was assigned (assembly.ts)
  const s = new (schemeClass(scheme, c))().setup({
    layout,
    coll,
    ledger,
    hyper: { lr: c.lr, beta1: c.beta1, beta2: c.beta2, eps: c.eps },
    dtype: c.wireDtype,
    theta0,
    values: run.impl.values,
    ...(cross ? { cross, ranks: run.coll.world } : {}),
    ...zeroPPContext(componentsOf(c, scheme), host, strides),
    gatherAhead: c.gatherAhead,
    persist: componentsOf(c, scheme) ? undefined : c.persist, // ZeRO++'s gathers are their own (zeropp/)
    regather: run.plan.regathered(scheme) ?? undefined,
    offload: c.offload,
    reduceBehind: c.reduceBehind,
    overlap: c.overlap,
    bucketBytes: c.bucketBytes,
    accumulate: c.accumulate,
    compute,
  });
  await turn(); // after the collection, the new heap and the loaded bands: heartbeats first
  const resume = c.resume?.[scheme];
  if (resume?.from) {
    // Another scheme's or world size's checkpoint: only the parts of its shards this rank's layout overlaps.
    const source = { ...resume, ...resume.from, model: c.model, adapt: c.adapt }; // the checkpoint's own (checkResumable)
    const { state, bytesRead } = await readStateFor(resume.dir, source, layout, s.masterState().sharded);
    await s.loadOptimizerState(state);
    log.info({ scheme, step: resume.step, from: resume.from, bytesRead }, 'resumed from checkpoint, resharded');
  } else if (resume) {
    await s.loadOptimizerState(await readRankShard(resume.dir, { scheme, ...resume }, ring.rank, s.optimizerState().master.length));
    log.info({ scheme, step: resume.step }, 'resumed from checkpoint');
  }
  return s;
}

/** Between steps, outside any step's timing: the clock resynced when due, a straggler's delay. Returns when
 *  the clock was last synced. */
async function betweenSteps(run: SchemeRun, synced: number): Promise<number> {
  if (performance.now() - synced > CLOCK_RESYNC_MS) {
    await run.resyncClock();
    synced = performance.now();
  }
  if (run.straggleMs > 0) await new Promise((r) => setTimeout(r, run.straggleMs));
  return synced;
}

export async function runScheme(run: SchemeRun): Promise<SchemeSummary> {
  const { scheme, plan, coll, data, compute, log } = run;
  const [c, ring, rings] = [plan.config, coll.ring, allRings(run)];
  const layout = plan.layoutFor(scheme, ring.rank);
  // What earlier schemes left (their heaps, the data set's teacher network) is garbage by now: collected, so
  // the process's own figure for this scheme counts what is live, not what waits for the collector.
  if (run.collect !== false) collectGarbage();
  const processBefore = bufferBytes() + compute.otherThreadBytes; // before this scheme's heap exists
  const ledger = await run.impl.ledger(plan, scheme);
  for (const r of rings) r.useLedger(ledger);
  ledger.account('data', data, data.bytes);
  try {
    const before = countersNow(run, rings);
    // Ranks of one host read the same interface: none may send a step's bytes through it before every rank has
    // read where its count starts (a rank that started first sent its first chunk before its neighbour's read).
    if (run.iface) await coll.barrier('scheme start');
    const s = await startScheme(run, layout, ledger);
    const resume = c.resume?.[scheme];
    const memory = new MemoryPeaks(ledger, processBefore);
    const steps: StepMetrics[] = [];
    const modeledMs: number[] = [];
    let synced = performance.now();
    const loopLag = loopLagMeter(run.loopLag !== false);
    for (let t = resume?.step ?? 0; t < c.steps; t++) {
      synced = await betweenSteps(run, synced);
      loopLag.restart();
      const st = await s.step(data.rankBatch(t, c.batch, ring.rank, ring.world));
      const modeled = compute.takeModeledMs?.();
      if (modeled !== undefined) modeledMs.push(modeled);
      else checkLoss(st.loss, t, scheme);
      memory.observe(st.processBytesPeak);
      const [quant, offloadMs] = [s.takeQuantError(), compute.takeOffloadMs?.()];
      const m = { ...stepMetrics(t, st, ledger, run.clock()), ...loopLag.fields(), ...(quant ? { quant } : {}), ...(offloadMs ? { offloadMs } : {}) };
      steps.push(m);
      log.debug({ scheme, step: t, loss: st.loss }, 'step');
      run.onStep(m);
      if (c.checkpoint && (t + 1) % c.checkpoint.every === 0) {
        const written = await writeRankShard(c.checkpoint.dir, scheme, ring.rank, ring.world, s.optimizerState());
        run.onCheckpoint(t + 1, written);
      }
    }
    // Once every rank has entered this barrier, the next rank has received all this rank sent in the last
    // step: only then have those bytes left through the interface (a shaped link may still hold them).
    loopLag.stop();
    if (run.iface) await coll.barrier('scheme end');
    const counted = countedSince(before, countersNow(run, rings));
    return {
      scheme,
      rank: ring.rank,
      params: layout.params,
      paddedParams: layout.paddedTotal,
      steps,
      memory: memory.summary(),
      ...counted,
      clock: run.clock(),
      products: productsBackend(),
      compute: run.computeMode,
      ...finalWeights(plan, scheme, ring.rank, s),
      ...(modeledMs.length ? { modeledMs } : {}),
      ...linkCipher(rings),
    };
  } finally {
    for (const r of rings) r.useLedger(undefined);
  }
}

/** This rank's final fp32 weights as bytes, if the coordinator takes them from this rank: its masters, and
 *  (fine-tuning) its frozen parameters' working copy widened (report.ts's weightParts says which). */
function finalWeights(plan: RunPlan, scheme: SchemeName, rank: number, s: Base): { master: Uint8Array; weightBytes: number } {
  const { master, frozen } = weightParts(plan, scheme, rank);
  if (frozen === 0) {
    const m = master ? s.masterState().data : new Float32Array(0);
    return { master: new Uint8Array(m.buffer, m.byteOffset, m.byteLength), weightBytes: m.byteLength };
  }
  const out = new Float32Array(master + frozen);
  if (master) out.set(s.masterState().data);
  out.set(s.frozenState(), master);
  return { master: new Uint8Array(out.buffer), weightBytes: out.byteLength };
}

function checkLoss(loss: number, t: number, scheme: SchemeName): void {
  if (!Number.isFinite(loss)) throw new Error(`training diverged: the loss is ${loss} at step ${t} of ${schemeTitle(scheme)} (lower --lr?)`);
}
