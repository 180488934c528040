// The fine-tuning options (training/adapters.ts), one definition for every command that takes them: local,
// coordinator, rank and plan.
import type { Argv } from 'yargs';

export function fineTuneOptions<T>(y: Argv<T>) {
  return y
    .option('lora', {
      type: 'string',
      describe: "R[,ALPHA]: LoRA adapters of rank R on the targets, scaled ALPHA/R (ALPHA default 8, as PEFT's); the base frozen (docs/lora.md)",
    })
    .option('lora-targets', {
      type: 'string',
      describe:
        'with --lora: the Linear layers to adapt, PEFT-style names matched at their end (gpt: attn.qkv,attn.proj,mlp.fc,mlp.proj; llama: q_proj,...,down_proj; head/lm_head too); default every Linear of the blocks (an MLP: every layer)',
    })
    .option('freeze', {
      type: 'string',
      describe: 'groups that do not train, a comma list: embeddings, head, blocks.I or blocks.I-J (an MLP: layers.I, layers.I-J)',
    });
}
