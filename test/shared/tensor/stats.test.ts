import { describe, expect, it } from 'vitest';
import { median, theilSenSlope } from '../../../shared/tensor/stats.js';

// Frames of 256 KiB arriving at 100 Mbit/s: one every 20.97 ms, as the link probe records them.
const FRAME = 256 << 10;
const msPerFrame = (FRAME * 8) / 100e3;
const steady = (n: number) => Array.from({ length: n }, (_, i) => ({ x: i * msPerFrame, y: (i + 1) * FRAME }));
const mbit = (bytesPerMs: number) => (bytesPerMs * 8) / 1000;

describe('summary statistics', () => {
  it('median: the middle value, or the mean of the two middle ones; 0 for none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBe(0);
  });

  it('Theil–Sen: a steady stream reads its rate exactly', () => {
    expect(mbit(theilSenSlope(steady(10)))).toBeCloseTo(100, 9);
  });

  it('Theil–Sen: a reader that stalls 30 ms as the window opens and reads the backlog at once is still read within 3%, where the endpoints read it 15% fast', () => {
    const late = steady(10).map((p) => ({ x: Math.max(p.x, 30 + (p.y / FRAME) * 0.01), y: p.y })); // frames 0 and 1 read at 30 ms
    const endpoints = (late[9].y - late[0].y) / (late[9].x - late[0].x);
    expect(mbit(endpoints)).toBeGreaterThan(114);
    expect(Math.abs(mbit(theilSenSlope(late)) - 100)).toBeLessThan(3);
  });

  it('Theil–Sen: points with one x give no slope; more points than the cap are thinned evenly, not cut off', () => {
    expect(
      theilSenSlope([
        { x: 1, y: 1 },
        { x: 1, y: 5 },
      ]),
    ).toBe(0);
    const long = steady(2000).map((p, i) => (i > 256 ? { x: p.x, y: p.y * 2 } : p)); // the rate changes after the cap
    expect(theilSenSlope(long, 256)).toBeGreaterThan(FRAME / msPerFrame);
  });
});
