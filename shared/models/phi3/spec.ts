// Phi-3 (Hugging Face's Phi3ForCausalLM, the 4k-context models): a Llama block whose q, k and v projections
// are one tensor, self_attn.qkv_proj (q's rows, then k's, then v's), and whose gate and up projections are one,
// mlp.gate_up_proj (gate's rows, then up's), as its checkpoints hold them. Laid out so, the fused tensors are
// the Llama's separate ones one after another, so the Llama's passes (CPU and GPU) compute it unchanged; only
// the names differ, and every name the world sees (dumps, checkpoints, state dicts) is Phi-3's.
import type { NamedTensor } from '../../training/param-group.js';
import { AdaptationError, type Adaptation } from '../../training/adapters.js';
import { LlamaSpec, RMS_EPS, ROPE_THETA, type LlamaOptions, type LlamaShape } from '../llama/spec.js';

/** Runs of the Llama's tensors that Phi-3 holds as one: the fused name, and the parts in order. */
const FUSED: [string, string[]][] = [
  ['self_attn.qkv_proj.weight', ['self_attn.q_proj.weight', 'self_attn.k_proj.weight', 'self_attn.v_proj.weight']],
  ['mlp.gate_up_proj.weight', ['mlp.gate_proj.weight', 'mlp.up_proj.weight']],
];

export class Phi3Spec extends LlamaSpec {
  override readonly kind = 'phi3';

  constructor(shape: LlamaShape, opts: Partial<Pick<LlamaOptions, 'ropeTheta' | 'rmsEps'>> = {}, adapt?: Adaptation) {
    // LoRA's adapters and --freeze's groups name the Llama's separate projections: Phi-3's fused ones are not built
    if (adapt) throw new AdaptationError(adapt.lora ? '--lora' : '--freeze', 'phi3: not built for its fused projections (qkv_proj, gate_up_proj) yet');
    super(shape, opts);
  }

  /** Every tensor under Phi-3's names: each fused run as one tensor, its rows the parts' in order. */
  override tensors(): NamedTensor[] {
    const out: NamedTensor[] = [];
    const all = super.tensors();
    for (let i = 0; i < all.length; i++) {
      const t = all[i];
      const run = FUSED.find(([, parts]) => t.name.endsWith(`.${parts[0]}`));
      if (!run) {
        out.push(t);
        continue;
      }
      const parts = all.slice(i, i + run[1].length);
      const prefix = t.name.slice(0, t.name.length - run[1][0].length);
      out.push({ name: `${prefix}${run[0]}`, offset: t.offset, shape: [parts.reduce((r, p) => r + p.shape[0], 0), t.shape[1]] });
      i += run[1].length - 1;
    }
    return out;
  }

  override describe(): string {
    const { layers, dim, heads, kvHeads, ff, seq, vocab } = this.shape;
    const options = this.ropeTheta === ROPE_THETA && this.rmsEps === RMS_EPS ? '' : ` (rope theta ${this.ropeTheta}, rms eps ${this.rmsEps})`;
    return `phi3:${layers},${dim},${heads},${kvHeads},${ff},${seq},${vocab}${options}`;
  }
}
