// Causal grouped-query attention of a Llama block, forward and backward: per sequence and query head, the
// products (q·kᵀ, P·v and their backward) and the causal softmax in the SIMD kernels on contiguous head
// slices; query head h reads key/value head h / (H/KV), whose gradients sum over the heads that share it.
import type { KernelArena } from '../../tensor/kernel-arena.js';
import { arenaCausalSoftmax, arenaCausalSoftmaxBackward } from '../../training/activations.js';
import type { LlamaBlockName as BlockName, LlamaShape } from './spec.js';

/** What the attention works on: the arena and its views, the shape, the batch's sequences, the block's regions. */
export interface AttentionHost {
  arena: KernelArena;
  v: Record<string, Float32Array>;
  shape: LlamaShape;
  hd: number; // each head's width
  Q: number; // the queries' width (HEADS heads): q's and y's rows
  K: number; // the keys' and values' width (KV_HEADS heads)
  rows: number;
  region: (k: BlockName) => string;
}

/** Copy the head at column `col` of sequence s out of rows of width `stride` into `dst` (T×hd), or back ('set', 'add'). */
function slice(host: AttentionHost, src: Float32Array, stride: number, col: number, dst: Float32Array, s: number, mode: 'out' | 'set' | 'add' = 'out'): void {
  const { seq: T } = host.shape;
  const hd = host.hd;
  for (let t = 0; t < T; t++) {
    const at = (s * T + t) * stride + col;
    for (let j = 0; j < hd; j++)
      if (mode === 'out') dst[t * hd + j] = src[at + j];
      else if (mode === 'set') src[at + j] = dst[t * hd + j];
      else src[at + j] += dst[t * hd + j];
  }
}

/** For each sequence s and query head h: its q, and its key/value head's k and v, in the head slices hq, hk,
 *  hv; then `f` with the head's offset into P (elements) and P's address. */
function eachHead(host: AttentionHost, f: (s: number, h: number, kv: number, base: number, Pptr: number) => void): void {
  const { heads: H, kvHeads: KV, seq: T } = host.shape;
  const { arena: ar, v, hd, Q, K } = host;
  const [q, k, vv] = (['q', 'k', 'v'] as const).map((x) => v[host.region(x)]);
  for (let s = 0; s < host.rows; s++)
    for (let h = 0; h < H; h++) {
      const kv = Math.floor(h / (H / KV));
      const base = (s * H + h) * T * T;
      slice(host, q, Q, h * hd, v.hq, s);
      slice(host, k, K, kv * hd, v.hk, s);
      slice(host, vv, K, kv * hd, v.hv, s);
      f(s, h, kv, base, ar.at(host.region('P')) + 4 * base);
    }
}

/** y = softmax(q·kᵀ/sqrt(hd), causal)·v per query head; P is kept for the backward pass. */
export function attentionForward(host: AttentionHost): void {
  const T = host.shape.seq;
  const { arena: ar, v, hd, Q } = host;
  const [y, P] = [v[host.region('y')], v[host.region('P')]];
  eachHead(host, (s, h, _kv, base, Pptr) => {
    ar.linearForward(ar.at('hq'), ar.at('hk'), ar.at('zero'), Pptr, T, hd, T); // S = q·kᵀ
    arenaCausalSoftmax(ar, P.subarray(base, base + T * T), T, 1 / Math.sqrt(hd));
    ar.matmulNN(Pptr, ar.at('hv'), ar.at('hy'), T, hd, T); // y = P·v
    slice(host, y, Q, h * hd, v.hy, s, 'set');
  });
}

/** The backward: region dx holds dy; dq is set, dk and dv summed over the query heads sharing them. */
export function attentionBackward(host: AttentionHost): void {
  const T = host.shape.seq;
  const { arena: ar, v, hd, Q, K } = host;
  const P = v[host.region('P')];
  v.dk.fill(0);
  v.dv.fill(0);
  eachHead(host, (s, h, kv, base, Pptr) => {
    slice(host, v.dx, Q, h * hd, v.hdy, s);
    ar.linearForward(ar.at('hdy'), ar.at('hv'), ar.at('zero'), ar.at('hdP'), T, hd, T); // dP = dy·vᵀ
    ar.matmulTN(Pptr, ar.at('hdy'), ar.at('hdv'), T, hd, T); // dv = Pᵀ·dy
    arenaCausalSoftmaxBackward(ar, P.subarray(base, base + T * T), v.hdP, T, 1 / Math.sqrt(hd)); // dS
    ar.matmulNN(ar.at('hdP'), ar.at('hk'), ar.at('hdq'), T, hd, T); // dq = dS·k
    ar.matmulTN(ar.at('hdP'), ar.at('hq'), ar.at('hdk'), T, hd, T); // dk = dSᵀ·q
    slice(host, v.dq, Q, h * hd, v.hdq, s, 'set');
    slice(host, v.dk, K, kv * hd, v.hdk, s, 'add');
    slice(host, v.dv, K, kv * hd, v.hdv, s, 'add');
  });
}
