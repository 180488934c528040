// An all-to-all among K ranks over K-1 stride rings (rank/hybrid-rings.ts): on ring s, every rank sends to the
// rank s places ahead and receives from the one s behind, one step (a shift), all K-1 at once, each over a link
// of its own. `me` is this rank's place among the K. A simulated rank's collectives run the K-1 as one grouped
// operation, as NCCL groups its sends and receives (simulator/sim-collectives.ts).
import type { AllToAllParts, Collectives } from './collectives.js';

export async function allToAll(rings: readonly Collectives[], me: number, parts: AllToAllParts, label: string): Promise<void> {
  const K = rings.length + 1;
  const grouped = rings[0]?.groupedAllToAll(K, me, parts, label);
  if (grouped) return void (await grouped);
  await Promise.all(rings.map((ring, i) => ring.shift(parts.send((me + i + 1) % K), parts.into((me - i - 1 + K) % K), `${label} +${i + 1}`)));
}
