// `zerowire consolidate`: the full model of a sharded checkpoint as one safetensors file (torch names).
import { ALL_SCHEMES, ConfigError } from '../../shared/control/run-config.js';
import { latestIndex } from '../../shared/io/checkpoint.js';
import { consolidate } from '../../shared/io/reshard.js';
import { serializeSafetensors, writeFileAtomic } from '../../shared/io/safetensors.js';
import { modelSpec } from '../../shared/models/registry.js';
import type { Cli } from '../options.js';

export function consolidateCommand(y: Cli, _exit: (code: number) => void): Cli {
  return y.command(
    'consolidate',
    'write the full model of a sharded checkpoint as one safetensors file (torch names)',
    (y) =>
      y
        .option('dir', { type: 'string', demandOption: true, describe: 'the --checkpoint-dir of the run' })
        .option('scheme', {
          choices: ALL_SCHEMES,
          demandOption: true,
          describe: "whose checkpoint: the scheme's newest complete one",
        })
        .option('out', { type: 'string', demandOption: true, describe: 'where to write model.safetensors' })
        .example('$0 consolidate --dir ck --scheme zero3 --out model.safetensors', "ZeRO-3's newest checkpoint in ck as one file with torch's names"),
    async (a) => {
      const { index } = await latestIndex(a.dir, a.scheme);
      if (!index) throw new ConfigError(`--dir ${a.dir}: no complete ${a.scheme} checkpoint (a checkpoint is complete once its index.json exists)`);
      await writeFileAtomic(
        a.out,
        serializeSafetensors(await consolidate(a.dir, index), { scheme: index.scheme, step: String(index.step), model: modelSpec(index).describe() }),
      );
      process.stdout.write(`${a.out}: ${index.scheme} at step ${index.step}, ${index.world} shards, model ${modelSpec(index).describe()}\n`);
    },
  );
}
