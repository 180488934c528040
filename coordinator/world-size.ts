// How many ranks a run has: the number given, or (auto) the ranks that joined once no new one has come for
// a while, and, with a DNS name to discover (a compose service), once every address it resolves to joined.
import { lookup } from 'node:dns/promises';

export interface WorldSizeOptions {
  world: number | 'auto';
  discover?: string; // with 'auto': a DNS name with one address per rank
  settleMs?: number; // with 'auto': no new rank for this long fixes the world size
  joinTimeoutMs: number;
}

export interface Settled {
  world: number;
  how: string | null; // why this size, for 'auto'
}

/** Resolves when the world size is settled. `joined` counts the members so far, `until` waits for a
 *  condition (failing after its timeout with `why`), `failed` is the run's failure, if any. */
export async function settleWorldSize(
  o: WorldSizeOptions,
  joined: () => number,
  until: (check: () => boolean, timeoutMs: number, why: () => string) => Promise<void>,
  failed: () => Error | null,
): Promise<Settled> {
  const timeout = o.joinTimeoutMs;
  if (o.world !== 'auto') {
    const world = o.world;
    await until(
      () => joined() === world,
      timeout,
      () => `only ${joined()} of ${world} ranks joined within ${timeout} ms`,
    );
    return { world, how: null };
  }
  const settle = o.settleMs ?? 3000;
  const name = o.discover;
  const deadline = Date.now() + timeout;
  let seen = -1;
  let since = Date.now();
  let expected = 0;
  for (;;) {
    const err = failed();
    if (err) throw err;
    const n = joined();
    if (name)
      expected = await lookup(name, { all: true }).then(
        (a) => a.length,
        () => 0,
      );
    if (n !== seen) {
      seen = n;
      since = Date.now();
    }
    const complete = n > 0 && (!name || n === expected);
    if (complete && Date.now() - since >= settle) break;
    if (Date.now() > deadline)
      throw new Error(name ? `${n} ranks joined within ${timeout} ms, but ${name} resolves to ${expected} addresses` : `no rank joined within ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    world: joined(),
    how: name ? `DNS name "${name}" resolves to ${expected} addresses, all joined, none new for ${settle} ms` : `no new rank for ${settle} ms`,
  };
}
