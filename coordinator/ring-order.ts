// Which rank id each joined rank gets, and so the ring's order (rank r sends to rank r+1). Ranks that asked
// for an id (RANK, JOB_COMPLETION_INDEX, --rank-id) keep it; the others fill the free ids grouped by host,
// so that ranks sharing a host are neighbours and only one of that host's ring links crosses the network.
// A pure function of who joined, tested directly.

export interface Seat {
  host: string; // the rank's host: --host-id, or the address other ranks dial
  requested?: number; // the id it asked for
  worldSize?: number; // the world size it expects (WORLD_SIZE)
  who: string; // how to name it in an error
}

export class RingOrderError extends Error {
  override name = 'RingOrderError';
}

/** Rank id per seat (same order as `seats`), for a world of seats.length ranks. */
export function assignRanks(seats: readonly Seat[]): number[] {
  const world = seats.length;
  for (const s of seats) {
    if (s.worldSize !== undefined && s.worldSize !== world)
      throw new RingOrderError(`${s.who} expects WORLD_SIZE ${s.worldSize}, but ${world} ranks joined the run`);
    if (s.requested !== undefined && s.requested >= world)
      throw new RingOrderError(`${s.who} asked for rank ${s.requested}, but the run has ${world} ranks (0..${world - 1})`);
  }
  const taken = new Set(seats.flatMap((s) => (s.requested === undefined ? [] : [s.requested])));
  const free = Array.from({ length: world }, (_, i) => i).filter((i) => !taken.has(i));
  // Unrequested seats by host, hosts in order of first appearance, join order kept within a host.
  const hosts = new Map<string, number[]>();
  seats.forEach((s, i) => {
    if (s.requested === undefined) hosts.set(s.host, [...(hosts.get(s.host) ?? []), i]);
  });
  const ids = seats.map((s) => s.requested ?? -1);
  let next = 0;
  for (const group of hosts.values()) for (const i of group) ids[i] = free[next++];
  return ids;
}
