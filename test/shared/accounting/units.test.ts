// Sizes printed in the unit that fits them, from a kibibyte to a terabyte, and a column's one unit.
import { describe, expect, it } from 'vitest';
import { columnUnit, formatBytes } from '../../../shared/accounting/units.js';
import { parseBytes } from '../../../cli/sizes.js';

describe('formatBytes: each figure in the unit that fits it', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.00 KiB'],
    [1536, '1.50 KiB'],
    [10 * 1024, '10.0 KiB'],
    [1024 ** 2 - 1, '1024 KiB'],
    [1024 ** 2, '1.00 MiB'],
    [224.6 * 1024, '225 KiB'],
    [16.88e6, '16.1 MiB'],
    [1024 ** 3, '1.00 GiB'],
    [80e9, '74.5 GiB'],
    [400168.9 * 2 ** 20, '391 GiB'],
    [1e12, '931 GiB'],
    [1024 ** 4, '1.00 TiB'],
    [6.3 * 1024 ** 4, '6.30 TiB'],
  ])('%d bytes -> %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it('reads back what it prints, within its three figures', () => {
    for (const b of [1024, 5e5, 7.7e7, 3.3e9, 1e12]) expect(parseBytes(formatBytes(b).replace(' ', '')) / b).toBeCloseTo(1, 2);
  });
});

describe('columnUnit: one unit per column, the largest figure below 10,000 of it (KiB at the least)', () => {
  it.each([
    [[3091.5 * 1024, 4637.3 * 1024], 'KiB', '3091.5'],
    [[9999 * 1024], 'KiB', '9999.0'],
    [[10_000 * 1024], 'MiB', '9.8'],
    [[277676032 * 1024], 'GiB', '264.8'],
    [[19696536 * 1024, 13131024 * 1024], 'GiB', '18.8'],
    [[1e12], 'GiB', '931.3'],
    [[2e13], 'TiB', '18.2'],
    [[0], 'KiB', '0.0'],
  ])('%j -> %s', (values, name, first) => {
    const u = columnUnit(values);
    expect(u.name).toBe(name);
    expect(u.cell(values[0])).toBe(first);
  });
});
