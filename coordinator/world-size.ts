// How many ranks a run has. Given a number, the coordinator waits for that many within the join timeout;
// if fewer came, it refuses, or (with --min-world M and at least M joined) runs with those, loudly. With
// 'auto', it takes the ranks that joined once no new one has come for a while and, with a DNS name to
// discover (a compose service, Swarm's tasks.NAME), once every address it resolves to joined. A world of
// one rank sends nothing over any network, so 'auto' never settles on it unless --min-world 1 says so.
import { lookup } from 'node:dns/promises';

export interface WorldSizeOptions {
  world: number | 'auto';
  minWorld?: number; // run with fewer than --world if at least this many joined (with a warning)
  discover?: string; // a DNS name with one address per rank: 'auto' waits for all of them; messages say how many
  settleMs?: number; // with 'auto': no new rank for this long fixes the world size
  joinTimeoutMs: number;
}

export interface Settled {
  world: number;
  how: string | null; // why this size, when it was not simply --world
  short: boolean; // fewer ranks than expected: the run goes on, but the operator must hear it
}

const resolvedCount = (name: string) =>
  lookup(name, { all: true }).then(
    (a) => a.length,
    () => 0,
  );

/** Resolves when the world size is settled. `joined` counts the members so far, `failed` is the run's
 *  failure, if any. */
export async function settleWorldSize(o: WorldSizeOptions, joined: () => number, failed: () => Error | null): Promise<Settled> {
  return o.world === 'auto' ? settleAuto(o, joined, failed) : settleFixed(o.world, o, joined, failed);
}

async function settleFixed(world: number, o: WorldSizeOptions, joined: () => number, failed: () => Error | null): Promise<Settled> {
  const seconds = o.joinTimeoutMs / 1000;
  const deadline = Date.now() + o.joinTimeoutMs;
  while (joined() < world && Date.now() < deadline) {
    const err = failed();
    if (err) throw err;
    await new Promise((r) => setTimeout(r, 100));
  }
  const n = joined();
  if (n >= world) return { world, how: null, short: false };
  if (o.minWorld !== undefined && n >= o.minWorld)
    return { world: n, how: `only ${n} of the ${world} expected ranks joined within ${seconds} s: running with ${n} (--min-world ${o.minWorld})`, short: true };
  if (n === 0) throw new Error(`no rank joined within ${seconds} s`);
  const dns = o.discover ? `; ${o.discover} resolves to ${await resolvedCount(o.discover)} addresses` : '';
  throw new Error(
    `only ${n} of ${world} ranks joined within ${seconds} s${dns}: the others never started or cannot reach this coordinator (under a launcher, see how it placed them: docker service ps, kubectl get pods); --min-world ${n} would run with these`,
  );
}

async function settleAuto(o: WorldSizeOptions, joined: () => number, failed: () => Error | null): Promise<Settled> {
  const timeout = o.joinTimeoutMs;
  const settle = o.settleMs ?? 3000;
  const name = o.discover;
  const least = o.minWorld ?? 2;
  const deadline = Date.now() + timeout;
  let seen = -1;
  let since = Date.now();
  let expected = 0;
  for (;;) {
    const err = failed();
    if (err) throw err;
    const n = joined();
    if (name) expected = await resolvedCount(name);
    if (n !== seen) {
      seen = n;
      since = Date.now();
    }
    const complete = n >= least && (!name || n === expected);
    if (complete && Date.now() - since >= settle) break;
    if (Date.now() > deadline) {
      const seconds = timeout / 1000;
      if (name && n !== expected) throw new Error(`${n} ranks joined within ${seconds} s, but ${name} resolves to ${expected} addresses`);
      if (n === 1)
        throw new Error(
          `only 1 rank joined within ${seconds} s: a world of one sends nothing over the network, so there is nothing to compare (start more ranks; under a launcher, see how it placed them: docker service ps, kubectl get pods; --world 1 runs it anyway)`,
        );
      throw new Error(n === 0 ? `no rank joined within ${seconds} s` : `only ${n} ranks joined within ${seconds} s (--min-world ${least})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    world: joined(),
    how: name ? `DNS name "${name}" resolves to ${expected} addresses, all joined, none new for ${settle} ms` : `no new rank for ${settle} ms`,
    short: false,
  };
}
