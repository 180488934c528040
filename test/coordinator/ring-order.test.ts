// Rank ids and the ring's order: asked-for ids kept, the rest grouped by host so ranks of a host are
// neighbours; impossible asks named.
import { describe, expect, it } from 'vitest';
import { assignRanks, RingOrderError } from '../../coordinator/ring-order.js';
import { crossHostLinks } from '../../shared/accounting/ring-links.js';

const seat = (host: string, requested?: number, worldSize?: number) => ({ host, requested, worldSize, who: `rank on ${host}` });
const hostsByRank = (hosts: string[], ids: number[]) => ids.reduce<string[]>((out, id, i) => ((out[id] = hosts[i]), out), []);

describe('assignRanks', () => {
  it('keeps join order on one host', () => {
    expect(assignRanks([seat('a'), seat('a'), seat('a')])).toEqual([0, 1, 2]);
  });

  it('groups ranks of a host together whatever order they joined in: one link per host crosses', () => {
    const hosts = ['a', 'b', 'a', 'b', 'c', 'a'];
    const ids = assignRanks(hosts.map((h) => seat(h)));
    expect(new Set(ids)).toEqual(new Set([0, 1, 2, 3, 4, 5]));
    expect(hostsByRank(hosts, ids)).toEqual(['a', 'a', 'a', 'b', 'b', 'c']);
    expect(crossHostLinks(hostsByRank(hosts, ids)).filter(Boolean)).toHaveLength(3);
    // Kept in join order, five of the six links would cross.
    expect(crossHostLinks(hosts).filter(Boolean)).toHaveLength(5);
  });

  it('keeps asked-for ids and fills the rest', () => {
    expect(assignRanks([seat('a', 2), seat('a'), seat('b', 0), seat('b')])).toEqual([2, 1, 0, 3]);
  });

  it('refuses an id outside the world and a WORLD_SIZE that does not match, naming the rank', () => {
    expect(() => assignRanks([seat('a', 3), seat('a')])).toThrow(new RingOrderError('rank on a asked for rank 3, but the run has 2 ranks (0..1)'));
    expect(() => assignRanks([seat('a', undefined, 4), seat('b')])).toThrow(/rank on a expects WORLD_SIZE 4, but 2 ranks joined the run/);
  });

  it('a single rank has no link that crosses', () => {
    expect(crossHostLinks(['a'])).toEqual([false]);
  });
});
