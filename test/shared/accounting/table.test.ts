// A table fitted to a width: the columns that matter least left out and named, long cells as notes.
import { describe, expect, it } from 'vitest';
import { textTable } from '../../../shared/accounting/table.js';

const header = [
  ['', 'memory', '', 'time', ''],
  ['scheme', 'theory', 'measured', 'total', 'detail'],
];
const rows = [
  ['DP', '16.00', '16.02', '120.5', '40.1/80.2/0.2'],
  ['ZeRO-3', '4.00', '4.01', '180.9', '40.1/80.2/0.1'],
];
const widest = (t: string) => Math.max(...t.split('\n').map((l) => l.length));

describe('textTable fitted to a width', () => {
  it('unlimited, or wide enough: every column, nothing added', () => {
    const all = textTable(header, rows);
    expect(all).toBe(textTable(header, rows, { width: widest(all) }));
    expect(all).not.toMatch(/left out/);
    expect(all.split('\n')[1]).toBe('scheme  theory  measured  total         detail');
  });

  it('narrower: leaves out columns in the order given, names them, and moves a group title to a column still shown', () => {
    const t = textTable(header, rows, { width: 30, dropOrder: [4, 1] });
    const lines = t.split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(30);
    expect(lines[0]).toBe('          memory   time'); // 'memory' moved from the theory column to measured
    expect(lines[1]).toBe('scheme  measured  total');
    expect(lines.slice(5).join(' ').replace(/\s+/g, ' ')).toBe('(left out to fit 30 columns: theory, detail; --wide shows them)');
    expect(lines).toContain(`ZeRO-3${' '.repeat(6)}4.01  180.9`);
  });

  it('by default the rightmost go first, and the first column and one more always stay', () => {
    expect(textTable(header, rows, { width: 31 }).split('\n')[1]).toBe('scheme  theory  measured  total');
    expect(textTable(header, rows, { width: 1 }).split('\n')[1]).toBe('scheme  theory');
  });

  it('long cells of a note column become a head and a numbered note when the table is too wide, before any column goes', () => {
    const need = [
      ['DP', 'never: does not fit (132.8 GB per GPU > 80.0 GB)', ''],
      ['ZeRO-3', '1329', '410.8'],
      ['ZeRO-1', 'latency-bound at every rate this search tried, beyond 100 Tbit/s', ''],
    ];
    const head = [['scheme', 'least Gbit/s', 'step ms']];
    expect(textTable(head, need, { width: Infinity, noteColumns: [1] })).not.toMatch(/\(1\)/);
    const t = textTable(head, need, { width: 70, noteColumns: [1] });
    expect(t.split('\n')).toEqual([
      'scheme  least Gbit/s  step ms',
      '------  ------------  -------',
      'DP         never (1)',
      'ZeRO-3          1329    410.8',
      'ZeRO-1           (2)',
      '(1) does not fit (132.8 GB per GPU > 80.0 GB)',
      '(2) latency-bound at every rate this search tried, beyond 100 Tbit/s',
    ]);
  });
});
