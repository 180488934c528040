// The ring's links against its hosts: rank r sends to rank r+1, and that link either stays on r's host
// (loopback) or crosses the network.

/** For each rank r (by id), whether its link to rank r+1 leaves its host. */
export function crossHostLinks(hostByRank: readonly string[]): boolean[] {
  return hostByRank.map((h, r) => hostByRank.length > 1 && h !== hostByRank[(r + 1) % hostByRank.length]);
}
