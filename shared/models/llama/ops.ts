// The Llama block's own elementwise ops, forward and backward, in JavaScript on views of the kernel arena:
// RMSNorm (fp32), rotary embeddings (half-split, as Hugging Face's rotate_half), SwiGLU's gate.

/** y = x / rms(x) · w over N rows of D; `r` keeps each row's 1/rms for the backward pass. */
export function rmsNorm(x: Float32Array, w: Float32Array, N: number, D: number, eps: number, y: Float32Array, r: Float32Array): void {
  for (let n = 0; n < N; n++) {
    const o = n * D;
    let ss = 0;
    for (let i = 0; i < D; i++) ss += x[o + i] * x[o + i];
    const inv = 1 / Math.sqrt(ss / D + eps);
    r[n] = inv;
    for (let i = 0; i < D; i++) y[o + i] = Math.fround(x[o + i] * inv) * w[i];
  }
}

/** RMSNorm's backward: dw += Σ dy·x/rms; dx += (g − x·r²·mean(g·x))·r with g = dy·w. */
export function rmsNormBackward(
  x: Float32Array,
  w: Float32Array,
  r: Float32Array,
  dy: Float32Array,
  N: number,
  D: number,
  dw: Float32Array,
  dx: Float32Array,
): void {
  for (let n = 0; n < N; n++) {
    const o = n * D;
    const inv = r[n];
    let gx = 0;
    for (let i = 0; i < D; i++) {
      gx += dy[o + i] * w[i] * x[o + i];
      dw[i] += dy[o + i] * x[o + i] * inv;
    }
    const c = (inv * inv * gx) / D;
    for (let i = 0; i < D; i++) dx[o + i] += inv * (dy[o + i] * w[i] - x[o + i] * c);
  }
}

/** cos and sin of every position t < T and frequency i < hd/2: θ^(−2i/hd)·t, as HF's rotary embedding. */
export function ropeTables(T: number, hd: number, theta: number): { cos: Float32Array; sin: Float32Array } {
  const half = hd / 2;
  const cos = new Float32Array(T * half);
  const sin = new Float32Array(T * half);
  for (let i = 0; i < half; i++) {
    const inv = 1 / theta ** ((2 * i) / hd);
    for (let t = 0; t < T; t++) {
      const a = Math.fround(t * Math.fround(inv));
      cos[t * half + i] = Math.cos(a);
      sin[t * half + i] = Math.sin(a);
    }
  }
  return { cos, sin };
}

/** Rotate each head of `x` (N rows of `heads` heads of hd, position t = row mod T) in place; `back`: the
 *  transposed rotation, which takes a gradient back through it. */
export function rope(x: Float32Array, N: number, T: number, heads: number, hd: number, tables: { cos: Float32Array; sin: Float32Array }, back = false): void {
  const half = hd / 2;
  const s = back ? -1 : 1;
  for (let n = 0; n < N; n++) {
    const t = n % T;
    for (let h = 0; h < heads; h++) {
      const o = (n * heads + h) * hd;
      for (let i = 0; i < half; i++) {
        const c = tables.cos[t * half + i];
        const sn = s * tables.sin[t * half + i];
        const a = x[o + i];
        const b = x[o + i + half];
        x[o + i] = a * c - b * sn;
        x[o + i + half] = b * c + a * sn;
      }
    }
  }
}

const sigmoid = (g: number) => 1 / (1 + Math.exp(-g));

/** h = silu(gate) · up. */
export function swiglu(gate: Float32Array, up: Float32Array, h: Float32Array): void {
  for (let i = 0; i < h.length; i++) h[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

/** From dh: dgate = dh·up·silu'(gate) into `dgate`, dup = dh·silu(gate) into `dup`. */
export function swigluBackward(gate: Float32Array, up: Float32Array, dh: Float32Array, dgate: Float32Array, dup: Float32Array): void {
  for (let i = 0; i < dh.length; i++) {
    const s = sigmoid(gate[i]);
    dup[i] = dh[i] * gate[i] * s;
    dgate[i] = dh[i] * up[i] * s * (1 + gate[i] * (1 - s));
  }
}
