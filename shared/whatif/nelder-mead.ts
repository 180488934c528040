// Nelder-Mead minimization, for fitting the GPU model's few constants offline (a handful of parameters,
// tens of rows, no gradients). Small enough that a dependency would weigh more than it.

/** The point minimizing `f`, starting from `x0` with steps of `scale` (relative) along each axis. */
export function nelderMead(f: (x: number[]) => number, x0: number[], { iterations = 4000, scale = 0.1, tolerance = 1e-12 } = {}): number[] {
  const n = x0.length;
  let simplex = [x0, ...x0.map((_, i) => x0.map((v, j) => (i === j ? v + scale * (Math.abs(v) || 1) : v)))].map((x) => ({ x, y: f(x) }));
  const along = (a: number[], b: number[], t: number) => a.map((v, i) => v + t * (b[i] - v));
  for (let it = 0; it < iterations; it++) {
    simplex.sort((a, b) => a.y - b.y);
    const best = simplex[0];
    const worst = simplex[n];
    if (worst.y - best.y < tolerance) break;
    const centroid = x0.map((_, j) => simplex.slice(0, n).reduce((s, p) => s + p.x[j], 0) / n);
    const point = (t: number) => {
      const x = along(centroid, worst.x, t);
      return { x, y: f(x) };
    };
    const reflected = point(-1);
    if (reflected.y < best.y) {
      const expanded = point(-2);
      simplex[n] = expanded.y < reflected.y ? expanded : reflected;
    } else if (reflected.y < simplex[n - 1].y) simplex[n] = reflected;
    else {
      const contracted = reflected.y < worst.y ? point(-0.5) : point(0.5);
      if (contracted.y < Math.min(worst.y, reflected.y)) simplex[n] = contracted;
      else simplex = simplex.map((p, i) => (i === 0 ? p : { x: along(best.x, p.x, 0.5), y: f(along(best.x, p.x, 0.5)) }));
    }
  }
  simplex.sort((a, b) => a.y - b.y);
  return simplex[0].x;
}
