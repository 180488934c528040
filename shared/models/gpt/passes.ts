// The GPT on a modeled GPU: embeddings, blocks (flash attention: no T x T scores kept) and the head.
import { blockWork } from '../../whatif/model-work.js';
import type { GpuPasses } from '../../whatif/model-passes.js';
import { decoderPasses } from '../decoder-passes.js';
import type { GptSpec } from './spec.js';

/** A GPT block keeps 32 bytes per token per unit of width: Korthikanti et al. 2022's 34·s·b·h without its two
 *  dropout masks, and without its 5·a·s²·b of attention scores, which flash attention never stores. */
export const gptPasses = (spec: GptSpec): GpuPasses =>
  decoderPasses(spec, (rows, pass) => blockWork(spec.shape.dim, spec.shape.seq, rows, pass), 32 * spec.shape.dim);
