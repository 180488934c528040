// The hybrid scheme's topology: shard groups of G consecutive ranks (the ring keeps a host's ranks together,
// so by default a group is a host), and the cross rings of the ranks that hold the same shard in every group.
// Pure functions of the world and G, used by the coordinator (to decide G) and by every rank (to wire).

/** Global rank ids of `rank`'s shard group, in ring order. */
export function groupMembers(rank: number, G: number): number[] {
  const first = Math.floor(rank / G) * G;
  return Array.from({ length: G }, (_, i) => first + i);
}

/** Global rank ids holding the same shard as `rank` in every group, in ring order. */
export function crossMembers(rank: number, G: number, world: number): number[] {
  return Array.from({ length: world / G }, (_, g) => g * G + (rank % G));
}

/**
 * The group size for this run: --shard-group G, or (0) the ranks of one host, which must be the same number
 * on every host. Null, with the reason, when there are not at least 2 groups of at least 2 ranks: then the
 * hybrid is ZeRO-3 (one group) or DP (groups of one), not a scheme of its own.
 */
export function shardGroupSize(requested: number, hostsByRank: readonly string[], what = 'HSDP'): { G: number } | { why: string } {
  const world = hostsByRank.length;
  if (requested > 0) {
    if (world % requested !== 0) return { why: `--shard-group ${requested} does not divide the world of ${world} ranks` };
    if (requested < 2 || world / requested < 2)
      return {
        why: `--shard-group ${requested} on ${world} ranks makes ${world / requested} group(s) of ${requested}: ${what} needs at least 2 groups of at least 2`,
      };
    return { G: requested };
  }
  const counts = new Map<string, number>();
  for (const h of hostsByRank) counts.set(h, (counts.get(h) ?? 0) + 1);
  const sizes = [...new Set(counts.values())];
  if (sizes.length > 1) return { why: `hosts run different numbers of ranks (${[...counts.values()].join(', ')}): give --shard-group` };
  const G = sizes[0];
  if (counts.size < 2 || G < 2)
    return { why: `${counts.size} host(s) of ${G} rank(s): ${what} by host needs at least 2 hosts of at least 2 ranks (or give --shard-group)` };
  return { G };
}
