// The GPT's arena regions, by name and type: what the forward pass keeps for the backward pass (the
// activations: the embeddings' output, each block's insides and output, ln_f and the logits) and the scratch
// the passes work in. The names are types, so a misspelled region does not compile.
import type { GptSpec } from './spec.js';
import { loadedSize } from '../../training/param-group.js';

/** What one block keeps for its backward pass; `out` is its output, the next unit's input. */
export type BlockName = 'ln1' | 'st1' | 'qkv' | 'P' | 'y' | 'xmid' | 'ln2' | 'st2' | 'hpre' | 'hact' | 'out';

/** Scratch: the loaded unit's parameters (p) and gradient (g), the running gradient (d, dx, d3, d4), the
 *  loss gradient (dl), zeros for a missing bias, and one attention head's slices (h*). */
type ScratchName = 'p' | 'g' | 'd' | 'dx' | 'd3' | 'd4' | 'dl' | 'zero' | 'hq' | 'hk' | 'hv' | 'hy' | 'hdy' | 'hdq' | 'hdk' | 'hdv' | 'hdP';

/** Block b's activation: `b3.qkv`; with --recompute the insides exist once, for the block at hand: `r.qkv`. */
export type BlockRegion = `b${number}.${BlockName}` | `r.${BlockName}`;

export type GptRegion = 'x0' | 'lnf' | 'stf' | 'logits' | BlockRegion | ScratchName;

/** A view of every region, valid until the arena is laid out again. */
export type GptViews = Record<Exclude<GptRegion, BlockRegion>, Float32Array> & Record<BlockRegion, Float32Array>;

/** The regions of one batch shape, in elements: activations first (what the backward pass reads), then scratch. */
export function gptRegions(
  spec: GptSpec,
  rows: number,
  recompute: boolean,
): { activations: Partial<Record<GptRegion, number>>; scratch: Record<ScratchName, number> } {
  const { dim: D, heads: H, seq: T, vocab: V, layers: L } = spec.shape;
  const N = rows * T;
  const block: Record<BlockName, number> = {
    ln1: N * D,
    st1: 2 * N,
    qkv: 3 * N * D,
    P: rows * H * T * T,
    y: N * D,
    xmid: N * D,
    ln2: N * D,
    st2: 2 * N,
    hpre: 4 * N * D,
    hact: 4 * N * D,
    out: N * D,
  };
  const names = Object.keys(block) as BlockName[];
  const activations: Partial<Record<GptRegion, number>> = { x0: N * D };
  // Every block keeps its output (the next unit's input); its insides are kept per block, or (recompute)
  // exist once, for the block being computed.
  for (let b = 0; b < L; b++) for (const k of names) if (k === 'out' || !recompute) activations[`b${b}.${k}`] = block[k];
  if (recompute) for (const k of names) if (k !== 'out') activations[`r.${k}`] = block[k];
  Object.assign(activations, { lnf: N * D, stf: 2 * N, logits: N * V });
  const largest = Math.max(...spec.layers.map(loadedSize));
  const hd = D / H;
  const head = { hq: T * hd, hk: T * hd, hv: T * hd, hy: T * hd, hdy: T * hd, hdq: T * hd, hdk: T * hd, hdv: T * hd, hdP: T * T };
  const scratch = { p: largest, g: largest, d: N * D, dx: N * D, d3: 3 * N * D, d4: 4 * N * D, dl: N * V, zero: Math.max(V, T), ...head };
  return { activations, scratch };
}
