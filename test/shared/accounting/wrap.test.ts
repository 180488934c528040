// Prose wrapped to a width: at spaces, continued under a row's last column where it has room, no line wider.
import { describe, expect, it } from 'vitest';
import { wrapText } from '../../../shared/accounting/wrap.js';
import { seeded } from '../../helpers/seed.js';

describe('wrapText', () => {
  it('unlimited or short: unchanged', () => {
    const text = 'a line\n  another, indented\n';
    expect(wrapText(text, Infinity)).toBe(text);
    expect(wrapText(text, 40)).toBe(text);
  });

  it('breaks at the last space that fits, continuing two past the indent', () => {
    expect(wrapText('  one two three four five six', 14).split('\n')).toEqual(['  one two', '    three four', '    five six']);
  });

  it('a row whose last column is prose continues under that column where it leaves room for a phrase', () => {
    const row = `  key  value  ${'word '.repeat(20).trim()}`;
    const lines = wrapText(row, 60).split('\n');
    expect(lines[0].startsWith('  key  value  word')).toBe(true);
    for (const l of lines.slice(1)) expect(l).toMatch(/^ {14}word/);
  });

  it('a last column too far right for a phrase starts a line of its own', () => {
    const row = `  ${'k'.repeat(30)}  ${'v'.repeat(30)}  left aside: a reason that needs a line of its own`;
    expect(wrapText(row, 80).split('\n')).toEqual([`  ${'k'.repeat(30)}  ${'v'.repeat(30)}`, '    left aside: a reason that needs a line of its own']);
  });

  const rng = seeded();
  it(`no line wider than asked, and every word kept in order (200 random texts, seed ${rng.seed})`, () => {
    for (let trial = 0; trial < 200; trial++) {
      const width = 10 + rng.int(100);
      const words = Array.from({ length: 1 + rng.int(60) }, () => 'x'.repeat(1 + rng.int(rng.int(4) === 0 ? 150 : 12)));
      const text = ' '.repeat(rng.int(6)) + words.join(rng.int(3) === 0 ? '  ' : ' ');
      const out = wrapText(text, width);
      for (const l of out.split('\n')) expect(l.length, `width ${width}`).toBeLessThanOrEqual(width);
      expect(out.replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
    }
  });
});
