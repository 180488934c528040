// zerowire's memory theory with and without offload beside DeepSpeed's estimators
// (estimate_zero2_model_states_mem_needs and estimate_zero3_model_states_mem_needs, as their source computes
// them, additional_buffer_factor 1.5, zero_init on), for the named shapes on 2 nodes × 8 GPUs: the host's
// memory agrees once their buffer factor is taken out; each difference on the GPU is one term, checked here.
import { describe, expect, it } from 'vitest';
import { memoryTheory } from '../../../shared/accounting/theory.js';
import { modelSpec, parseModel } from '../../../shared/models/registry.js';
import { ShardLayout } from '../../../shared/training/layout.js';
import { SCHEME_TABLE } from '../../../shared/training/schemes/table.js';

const [NODES, PER_NODE] = [2, 8];
const N = NODES * PER_NODE;
const BUFFER = 1.5; // their additional_buffer_factor

/** DeepSpeed's estimate, bytes: [per node's CPU, per GPU]. */
function zero2(P: number, offload: boolean): [number, number] {
  if (offload) return [P * Math.max(4 * N, 16) * BUFFER, 2 * P];
  return [P * 4 * PER_NODE * BUFFER, 4 * P + Math.floor((16 * P) / N)];
}
function zero3(P: number, largest: number, offload: boolean, params: boolean): [number, number] {
  const layer = 4 * largest;
  if (offload && params) return [P * 18 * (1 / NODES) * BUFFER, layer];
  if (offload) return [P * 16 * (1 / NODES) * BUFFER, layer + Math.floor((2 * P) / N)];
  return [largest * 4 * PER_NODE * BUFFER, layer + Math.floor((18 * P) / N)];
}

const close = (a: number, b: number, P: number) => expect(Math.abs(a - b)).toBeLessThan(1e-4 * P); // padding to 16 ranks

describe("memory beside DeepSpeed's estimators (2 nodes × 8 GPUs, bf16)", () => {
  for (const name of ['llama2-7b', 'llama2-13b', 'llama3-8b', 'qwen2-1.5b'])
    it(name, () => {
      const spec = modelSpec({ model: parseModel(name) });
      const P = spec.params;
      const largest = Math.max(...spec.layers.map((l) => l.size)); // their largest layer: our largest unit (the embeddings)
      const sizes = new ShardLayout(spec, N, 0, 'layer').sizes();
      const ours = (scheme: 'zero2' | 'zero3', offload?: { params: boolean }) =>
        memoryTheory(SCHEME_TABLE[scheme], sizes, 'bf16', undefined, undefined, offload);
      const rows: string[] = [];
      const say = (what: string, ds: [number, number], z: ReturnType<typeof ours>) =>
        rows.push(
          `${what.padEnd(26)} DeepSpeed GPU ${(ds[1] / 1e9).toFixed(2)} GB, CPU/node ${(ds[0] / 1e9).toFixed(1)} GB | zerowire GPU ${(z.resident / 1e9).toFixed(2)} GB resident, host/node ${((z.hostTotal * PER_NODE) / 1e9).toFixed(1)} GB`,
        );

      // ZeRO-2. Without offload they count the 16-bit gradients whole (2P, before their reduction) and an fp32
      // gradient partition (4P/N); the seed's ZeRO-2 keeps the 16-bit shard only (2P/N) and Adam reads a scratch.
      let ds = zero2(P, false);
      let z = ours('zero2');
      close(ds[1] - z.resident, 2 * P - (2 * P) / N + (4 * P) / N, P);
      say('ZeRO-2', ds, z);
      // With offload their GPU holds the 16-bit parameters alone; ours also the 16-bit gradient shard (2P/N),
      // reduced there before it goes down. Hosts: ours hold 16 B a parameter (masters, moments, fp32 gradients)
      // over all the ranks; their ZeRO-2 estimate takes the larger of 16 B a parameter on every node (not divided
      // by the nodes, unlike their ZeRO-3's) and 4 B a parameter for each of the 16 processes loading the whole
      // model (64 B here): a loading peak no training step holds.
      ds = zero2(P, true);
      z = ours('zero2', { params: false });
      close(z.resident - ds[1], (2 * P) / N, P);
      close(z.hostTotal * N, 16 * P, P);
      expect(ds[0] / BUFFER).toBe(P * 4 * N);
      say('ZeRO-2, offload optimizer', ds, z);

      // ZeRO-3. 18 B a parameter over the ranks where the seed counts 16: their fp32 gradient partition (4) in
      // place of the 16-bit one (2); and 4 B of the largest layer (its 16-bit parameters and gradients) where
      // ours holds the gathered units (not compared: it is the transient, not the resident).
      ds = zero3(P, largest, false, false);
      z = ours('zero3');
      close(ds[1] - 4 * largest - z.resident, (2 * P) / N, P);
      say('ZeRO-3', ds, z);
      // Optimizer offload: their host 16 B a parameter over the nodes, as ours; their GPU the 16-bit parameter
      // shard (2P/N), ours that and the 16-bit gradient shard (2P/N).
      ds = zero3(P, largest, true, false);
      z = ours('zero3', { params: false });
      close(z.hostTotal * PER_NODE, ds[0] / BUFFER, P);
      close(z.resident - (ds[1] - 4 * largest), (2 * P) / N, P);
      say('ZeRO-3, offload optimizer', ds, z);
      // And parameters: 18 B a parameter on the hosts, equal; on the GPU theirs is the largest layer alone, ours
      // the 16-bit gradient shard besides the gathered units.
      ds = zero3(P, largest, true, true);
      z = ours('zero3', { params: true });
      close(z.hostTotal * PER_NODE, ds[0] / BUFFER, P);
      close(z.resident, (2 * P) / N, P);
      say('ZeRO-3, offload both', ds, z);
      console.log(`${name} (${P} parameters):\n  ${rows.join('\n  ')}`);
    });
});
