import { describe, expect, it } from 'vitest';
import { crossMembers, groupMembers, shardGroupSize } from '../../../shared/control/shard-groups.js';

describe('shard groups of the hybrid scheme', () => {
  it('a group is G consecutive ranks; the cross ring joins the ranks at the same place in every group', () => {
    expect(groupMembers(5, 4)).toEqual([4, 5, 6, 7]);
    expect(crossMembers(5, 4, 12)).toEqual([1, 5, 9]);
    expect(crossMembers(0, 2, 4)).toEqual([0, 2]);
  });

  it('by host: every host the same number of ranks, at least 2 hosts of 2', () => {
    expect(shardGroupSize(0, ['a', 'a', 'b', 'b'])).toEqual({ G: 2 });
    expect(shardGroupSize(0, ['a', 'a', 'a', 'b'])).toEqual({ why: expect.stringMatching(/different numbers of ranks \(3, 1\)/) });
    expect(shardGroupSize(0, ['a', 'b', 'c', 'd'])).toEqual({ why: expect.stringMatching(/4 host\(s\) of 1 rank\(s\)/) });
    expect(shardGroupSize(0, ['a', 'a', 'a', 'a'])).toEqual({ why: expect.stringMatching(/1 host\(s\) of 4 rank\(s\)/) });
  });

  it('--shard-group G must divide the world into at least 2 groups of at least 2', () => {
    expect(shardGroupSize(2, ['a', 'a', 'a', 'a'])).toEqual({ G: 2 });
    expect(shardGroupSize(3, ['a', 'a', 'a', 'a'])).toEqual({ why: '--shard-group 3 does not divide the world of 4 ranks' });
    expect(shardGroupSize(4, ['a', 'a', 'a', 'a'])).toEqual({ why: expect.stringMatching(/makes 1 group\(s\) of 4/) });
  });
});
