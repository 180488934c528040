// Summary statistics the reports and benchmarks share.

/** The median (the mean of the two middle values for an even count); 0 for none. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
}

/** The Theil–Sen slope of y over x: the median slope over every pair of points with distinct x. A few points
 *  off the line (a reader that stalled, then read its backlog at once) move it little, where the slope
 *  between two chosen points takes their whole error. At most `cap` points, evenly spaced, are used, since
 *  the pairs grow as its square; 0 when no pair has distinct x. */
export function theilSenSlope(points: readonly { x: number; y: number }[], cap = 256): number {
  const step = Math.max(1, points.length / cap);
  const p = Array.from({ length: Math.min(points.length, cap) }, (_, i) => points[Math.floor(i * step)]);
  const slopes: number[] = [];
  for (let i = 0; i < p.length; i++) {
    for (let j = i + 1; j < p.length; j++) if (p[j].x !== p[i].x) slopes.push((p[j].y - p[i].y) / (p[j].x - p[i].x));
  }
  return median(slopes);
}
