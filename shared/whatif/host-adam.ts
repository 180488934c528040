// The host's Adam rate for a modeled offload run when none is given (--host-adam-gparams): zerowire's own Adam
// (the SIMD kernel the ranks run) timed on this host over a buffer of the rank's shard, at most 64M parameters,
// per core, then shared among the ranks of a host as a host's cores are (DeepSpeed's CPU Adam runs one thread
// per core it is given). What the report then says: measured here, on this host's cores.
import { availableParallelism } from 'node:os';
import { adamUpdate } from '../training/adam.js';
import { MemoryLedger } from '../tensor/memory-ledger.js';
import { WasmHeap } from '../tensor/heap.js';

/** The largest buffer timed, parameters. */
const MAX_PARAMS = 64 * 2 ** 20;

/** Rates already measured in this process, by buffer size: `plan` asks again for every change it weighs. */
const measured = new Map<number, number>();

/** 10^9 parameters a second one core updates, timed over `params` parameters (the best of three). */
function adamGparamsPerCore(params: number): number {
  const n = Math.max(1 << 16, Math.min(MAX_PARAMS, Math.floor(params)));
  const known = measured.get(n);
  if (known !== undefined) return known;
  const heap = WasmHeap.create(4 * 4 * n + (1 << 20));
  const ledger = new MemoryLedger(heap);
  const [p, m, v, g] = (['master', 'm', 'v', 'compute'] as const).map((b) => ledger.allocF32(b, n));
  for (let i = 0; i < n; i += 97) [p[i], g[i]] = [0.01 * (i % 13), 1e-3 * ((i % 7) - 3)];
  let best = Infinity;
  for (let t = 1; t <= 3; t++) {
    const t0 = performance.now();
    adamUpdate(p, m, v, g, t, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 });
    best = Math.min(best, performance.now() - t0);
  }
  measured.set(n, n / (best * 1e6));
  return n / (best * 1e6);
}

/** A rank's share of this host's Adam rate, with `ranksPerHost` ranks on a host like this one. */
export function hostAdamGparams(shardParams: number, ranksPerHost: number): { gparams: number; cores: number; perCore: number } {
  const cores = availableParallelism();
  const perCore = adamGparamsPerCore(shardParams);
  return { gparams: perCore * Math.max(1, cores / Math.max(1, ranksPerHost)), cores, perCore };
}
