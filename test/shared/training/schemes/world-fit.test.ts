// Which schemes can run on the hosts that joined (the scheme table's conditions): left out of `all` with the
// reason, refused by name.
import { describe, expect, it } from 'vitest';
import { resolveHybrid } from '../../../../shared/training/schemes/world-fit.js';
import { smallConfig } from '../../../helpers/config.js';

describe('schemes on the world that joined', () => {
  it("'all' leaves hsdp and zeropp out with the reason; either asked for by name and impossible is an error", () => {
    const all = smallConfig({ scheme: 'all' });
    const left = resolveHybrid(all, ['a', 'b', 'c', 'd']);
    expect(left.config.schemes).toEqual(['dp', 'zero1', 'zero2', 'zero3']);
    expect(left.notes).toEqual([
      expect.stringMatching(/^HSDP left out: 4 host\(s\) of 1 rank\(s\)/),
      expect.stringMatching(/^ZeRO\+\+ left out: 4 host\(s\) of 1 rank\(s\)/),
    ]);
    expect(resolveHybrid(all, ['a', 'a', 'b', 'b'])).toMatchObject({
      config: { shardGroup: 2, schemes: ['dp', 'zero1', 'zero2', 'zero3', 'hsdp', 'zeropp'] },
      notes: [],
    });
    expect(() => resolveHybrid(smallConfig({ scheme: 'dp,hsdp' }), ['a', 'b'])).toThrow(/^--scheme hsdp: 2 host\(s\) of 1 rank\(s\)/);
    expect(() => resolveHybrid(smallConfig({ scheme: 'dp,zeropp' }), ['a', 'b'])).toThrow(/^--scheme zeropp: 2 host\(s\) of 1 rank\(s\)/);
  });

  it('a scheme that cannot train frozen weights is left out of all, refused by name', () => {
    const all = smallConfig({ scheme: 'all', model: '4,8,4', freeze: 'layers.0' });
    const left = resolveHybrid(all, ['a', 'a', 'b', 'b']);
    expect(left.config.schemes).toEqual(['dp', 'zero1', 'zero2', 'zero3', 'hsdp']);
    expect(left.notes).toEqual(['ZeRO++ left out: it does not quantize frozen weights yet (--lora, --freeze)']);
    expect(() => smallConfig({ scheme: 'dp,zeropp', model: '4,8,4', freeze: 'layers.0' })).toThrow(
      /^--scheme zeropp with --lora or --freeze: it does not quantize frozen weights yet/,
    );
  });
});
