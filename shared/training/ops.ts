// The operations a model is made of, as plain functions over flat fp32 arrays: GELU and softmax
// cross-entropy, which the model runs as they are, and the Linear layer's products, which it runs in
// WebAssembly SIMD kernels (tensor/wasm/matmul.wat) and which are kept here as the reference those kernels
// are tested against. They know nothing about layers, units or ranks.

// erf with |relative error| < 1.2e-7 (Numerical Recipes' Chebyshev fit of erfc); exact enough for fp32.
function erf(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - r : r - 1;
}

const INV_SQRT2 = Math.SQRT1_2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

/** out = x W^T + b for `rows` rows; W is (outputs, inputs) row-major. */
export function linearForward(x: Float32Array, w: Float32Array, b: Float32Array, rows: number, inputs: number, outputs: number, out: Float32Array): void {
  for (let r = 0; r < rows; r++) {
    const xo = r * inputs;
    for (let o = 0; o < outputs; o++) {
      const wo = o * inputs;
      let s = 0;
      for (let i = 0; i < inputs; i++) s += x[xo + i] * w[wo + i];
      out[r * outputs + o] = s + b[o];
    }
  }
}

/** Given dOut (rows, outputs): gw += dOut^T x, gb += sum of dOut rows, and (if dx) dx = dOut W. */
export function linearBackward(
  x: Float32Array,
  w: Float32Array,
  dOut: Float32Array,
  rows: number,
  inputs: number,
  outputs: number,
  gw: Float32Array,
  gb: Float32Array,
  dx: Float32Array | null,
): void {
  for (let r = 0; r < rows; r++) {
    const xo = r * inputs;
    for (let o = 0; o < outputs; o++) {
      const g = dOut[r * outputs + o];
      if (g === 0) continue;
      gb[o] += g;
      const wo = o * inputs;
      for (let i = 0; i < inputs; i++) gw[wo + i] += g * x[xo + i];
    }
  }
  if (!dx) return;
  dx.fill(0);
  for (let r = 0; r < rows; r++) {
    const xo = r * inputs;
    for (let o = 0; o < outputs; o++) {
      const g = dOut[r * outputs + o];
      if (g === 0) continue;
      const wo = o * inputs;
      for (let i = 0; i < inputs; i++) dx[xo + i] += g * w[wo + i];
    }
  }
}

export function gelu(pre: Float32Array, out: Float32Array): void {
  for (let i = 0; i < pre.length; i++) {
    const v = pre[i];
    out[i] = 0.5 * v * (1 + erf(v * INV_SQRT2));
  }
}

/** d(gelu)/d(pre) applied to the incoming gradient, in place: g *= Phi(x) + x phi(x). Phi(x) is read back
 *  from the forward pass's output, act = x Phi(x), instead of a second erf (a third of the GELU's time);
 *  near x = 0, where that division loses its digits, Phi is 1/2 + x phi(0). */
export function geluBackward(pre: Float32Array, act: Float32Array, g: Float32Array): void {
  for (let i = 0; i < pre.length; i++) {
    const v = pre[i];
    const phi = INV_SQRT_2PI * Math.exp(-0.5 * v * v);
    const Phi = v > 1e-3 || v < -1e-3 ? act[i] / v : 0.5 + v * INV_SQRT_2PI;
    g[i] *= Phi + v * phi;
  }
}

/** The attention's probabilities in place: each row t of a T x T block of scores becomes softmax(S·scale) over
 *  u <= t, and zero beyond (causal). */
export function causalSoftmax(P: Float32Array, T: number, scale: number): void {
  for (let t = 0; t < T; t++) {
    const row = t * T;
    let max = -Infinity;
    for (let u = 0; u <= t; u++) max = Math.max(max, P[row + u] * scale);
    let sum = 0;
    for (let u = 0; u <= t; u++) sum += P[row + u] = Math.exp(P[row + u] * scale - max);
    for (let u = 0; u <= t; u++) P[row + u] /= sum;
    for (let u = t + 1; u < T; u++) P[row + u] = 0;
  }
}

/** Its backward in place: dP (T x T) becomes dS = P·(dP - Σ_u P·dP)·scale over u <= t, zero beyond. */
export function causalSoftmaxBackward(P: Float32Array, dP: Float32Array, T: number, scale: number): void {
  for (let t = 0; t < T; t++) {
    const row = t * T;
    let dot = 0;
    for (let u = 0; u <= t; u++) dot += P[row + u] * dP[row + u];
    for (let u = 0; u <= t; u++) dP[row + u] = P[row + u] * (dP[row + u] - dot) * scale;
    for (let u = t + 1; u < T; u++) dP[row + u] = 0;
  }
}

/** Mean softmax cross-entropy over rows, and its gradient with respect to the logits. */
export function crossEntropy(logits: Float32Array, labels: Int32Array, rows: number, classes: number, dLogits: Float32Array): number {
  let total = 0;
  for (let r = 0; r < rows; r++) {
    const o = r * classes;
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, logits[o + c]);
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += Math.exp(logits[o + c] - max);
    const logSum = Math.log(sum) + max;
    const y = labels[r];
    if (!(y >= 0 && y < classes)) throw new RangeError(`label ${y} at row ${r} is not a class in 0..${classes - 1}`);
    total += logSum - logits[o + y];
    for (let c = 0; c < classes; c++) dLogits[o + c] = (Math.exp(logits[o + c] - logSum) - (c === y ? 1 : 0)) / rows;
  }
  return total / rows;
}

/** LayerNorm's epsilon, as torch's default. */
const EPS = 1e-5;

/** LayerNorm over rows of width D: out = (x - mean) * rstd * w + b; keeps mean and rstd. */
export function layerNorm(x: Float32Array, w: Float32Array, b: Float32Array, N: number, D: number, out: Float32Array, stats: Float32Array): void {
  for (let n = 0; n < N; n++) {
    const o = n * D;
    let mean = 0;
    for (let i = 0; i < D; i++) mean += x[o + i];
    mean /= D;
    let v = 0;
    for (let i = 0; i < D; i++) v += (x[o + i] - mean) ** 2;
    const rstd = 1 / Math.sqrt(v / D + EPS);
    stats[2 * n] = mean;
    stats[2 * n + 1] = rstd;
    for (let i = 0; i < D; i++) out[o + i] = (x[o + i] - mean) * rstd * w[i] + b[i];
  }
}

/** LayerNorm backward: dw, db accumulate; dx += the input gradient. */
export function layerNormBackward(
  x: Float32Array,
  w: Float32Array,
  stats: Float32Array,
  dy: Float32Array,
  N: number,
  D: number,
  dw: Float32Array,
  db: Float32Array,
  dx: Float32Array,
): void {
  for (let n = 0; n < N; n++) {
    const o = n * D;
    const mean = stats[2 * n];
    const rstd = stats[2 * n + 1];
    let sumG = 0;
    let sumGX = 0;
    for (let i = 0; i < D; i++) {
      const xhat = (x[o + i] - mean) * rstd;
      const g = dy[o + i] * w[i];
      dw[i] += dy[o + i] * xhat;
      db[i] += dy[o + i];
      sumG += g;
      sumGX += g * xhat;
    }
    sumG /= D;
    sumGX /= D;
    for (let i = 0; i < D; i++) {
      const xhat = (x[o + i] - mean) * rstd;
      dx[o + i] += rstd * (dy[o + i] * w[i] - sumG - xhat * sumGX);
    }
  }
}
