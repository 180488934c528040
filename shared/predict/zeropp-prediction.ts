// ZeRO++'s collectives in the step predictor (step-prediction.ts): ZeRO-3's gathers and reduce-scatters as its
// components send them. qwZ's gathers carry int8 blocks on the run's ring; hpZ's backward gathers run on the
// host's ring (the intra-host link), a recompute's too; qgZ's gradients go within the host, then across it, as
// int4 blocks (a host's ranks sharing its link across). Each quantization and dequantization costs the device
// memory-bound time: qwZ's as work on the step's timeline once its gather is issued (its bytes do not wait for
// it), qgZ's on the reduce stream, before and after each exchange (the compute does not wait for them).
import { bytesPerElement } from '../tensor/dtype.js';
import { quantizedElems } from '../tensor/quantize.js';
import type { Unit } from '../training/layout.js';
import type { SchemeName } from '../control/run-config.js';
import type { GpuCost } from '../whatif/gpu-cost.js';
import { quantizeWork } from '../whatif/model-passes.js';
import type { RunPlan } from '../accounting/run-plan.js';
import { RingQueue, type Link } from './ring-queue.js';

export interface ZeroPPQueues {
  /** A unit's gather issued at `at`: in the backward pass (`fromHost`: hpZ serves it, if on) or the forward;
   *  returns when it ends. */
  gather(u: Unit, fromHost: boolean, at: number): number;
  /** A unit's gradient reduced from `at`; returns when it ends. */
  reduce(u: Unit, at: number): number;
  busy(): number;
}

export function zeroPPQueues(plan: RunPlan, scheme: SchemeName, cost: GpuCost, link: Link, intra: Link, work: (ms: number) => void): ZeroPPQueues | null {
  const z = plan.zeroPP(scheme);
  if (!z) return null;
  const c = plan.config;
  const N = plan.world;
  const [G, M] = [z.G, N / z.G];
  const b = bytesPerElement(c.wireDtype);
  const main = new RingQueue(link, N, c.chunkBytes, c.linkScale);
  const host = new RingQueue(intra, G, c.chunkBytes, c.linkScale);
  const across = new RingQueue({ ...link, gbit: link.gbit / G }, M, c.chunkBytes, c.linkScale);
  const q8 = (n: number) => quantizedElems(n, { bits: 8, block: z.block });
  const q4 = (n: number) => quantizedElems(n, { bits: 4, block: z.block });
  const kernels = (values: number, codeBytes: number) => cost.chainMs(quantizeWork(values, codeBytes));
  return {
    busy: () => main.busy + host.busy + across.busy,
    gather(u: Unit, fromHost: boolean, at: number): number {
      if (fromHost && z.hpz) return host.run(at, u.padded, b, 1);
      if (!z.qwz) return main.run(at, u.padded, b, 1);
      const end = main.run(at, N * q8(u.shard), 2, 1);
      work(kernels(u.shard, 2 * q8(u.shard)) + kernels(u.padded, 2 * N * q8(u.shard)));
      return end;
    },
    reduce(u: Unit, at: number): number {
      if (!z.qgz) return main.run(at, u.padded, b, 1);
      const S = u.shard;
      // each exchange quantizes before it sends and dequantizes after, on the reduce stream: beside the compute
      const [inHost, acrossHosts] = [kernels((G - 1) * M * S, 2 * (G - 1) * q4(M * S)), kernels((M - 1) * S, 2 * (M - 1) * q4(S))];
      const hostDone = host.run(at + inHost, G * q4(M * S), 2, 1) + inHost;
      return across.run(hostDone + acrossHosts, M * q4(S), 2, 1) + acrossHosts;
    },
  };
}
