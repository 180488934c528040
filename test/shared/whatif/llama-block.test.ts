// The Llama-style block as the cost model counts it (model-work.ts, llamaBlockWork: its ops as Hugging Face's
// layer launches them), against the three Llama rows timed on the H200, with the constants fitted on the GPT
// sweep unchanged: nothing is fitted on these rows.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blockWork, llamaBlockWork } from '../../../shared/whatif/model-work.js';
import { presetCost } from '../../../shared/whatif/preset.js';

interface LlamaRow {
  name: string;
  D: number;
  H: number;
  KV: number;
  FF: number;
  B: number;
  T: number;
  params: number;
  fwd_ms: number;
  step_ms: number;
}

const rows: LlamaRow[] = readFileSync(new URL('../../fixtures/gpu/h200-llama.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as LlamaRow);
const cost = presetCost('h200');
const shape = (r: LlamaRow) => ({ dim: r.D, heads: r.H, kvHeads: r.KV, ff: r.FF });

describe('a Llama-style block on the H200, modeled with the GPT-fitted constants', () => {
  it('reproduces each of the three rows within 15%, step and forward', () => {
    expect(rows.map((r) => r.name)).toEqual(['llama2-7b', 'llama2-13b', 'llama2-70b']);
    for (const r of rows) {
      const [fwd, bwd] = (['forward', 'backward'] as const).map((p) => llamaBlockWork(shape(r), r.T, r.B, p));
      const step = cost.chainMs(fwd, bwd);
      const forward = cost.chainMs(fwd);
      console.log(
        `${r.name} (D ${r.D}, ${r.H} heads, ${r.KV} KV heads, FF ${r.FF}, ${r.B}x${r.T} tokens): step measured ${r.step_ms.toFixed(2)} ms, modeled ${step.toFixed(2)} (${(100 * (step / r.step_ms - 1)).toFixed(1)}%); forward ${r.fwd_ms.toFixed(2)} vs ${forward.toFixed(2)} (${(100 * (forward / r.fwd_ms - 1)).toFixed(1)}%)`,
      );
      expect(Math.abs(step / r.step_ms - 1), `${r.name} step`).toBeLessThanOrEqual(0.15);
      expect(Math.abs(forward / r.fwd_ms - 1), `${r.name} forward`).toBeLessThanOrEqual(0.15);
      // The weights it counts are the block's: the row's parameter count less the two norms' 2·D.
      expect(2 * r.D * r.D + 2 * r.D * r.KV * (r.D / r.H) + 3 * r.D * r.FF + 2 * r.D).toBe(r.params);
    }
  });

  it('is slower than the GPT block of the same width by about what the GPU measured (1.26x at 7B)', () => {
    const r = rows[0];
    const llama = cost.chainMs(llamaBlockWork(shape(r), r.T, r.B, 'forward'), llamaBlockWork(shape(r), r.T, r.B, 'backward'));
    const gpt = cost.chainMs(blockWork(r.D, r.T, r.B, 'forward'), blockWork(r.D, r.T, r.B, 'backward'));
    console.log(
      `7B width, 4096 tokens: Llama ${llama.toFixed(2)} ms, GPT ${gpt.toFixed(2)} ms modeled (${(llama / gpt).toFixed(2)}x; measured 10.90 / 8.67 = 1.26x)`,
    );
    expect(llama / gpt).toBeGreaterThan(1.1);
    expect(llama / gpt).toBeLessThan(1.4);
  });
});
