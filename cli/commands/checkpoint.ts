// `zerowire checkpoint inspect DIR`: what a checkpoint folder holds and whether each checkpoint is whole.
import { formatInspection, inspectCheckpoints } from '../../shared/io/checkpoint-inspect.js';
import type { Cli } from '../options.js';

export function checkpointCommand(y: Cli, exit: (code: number) => void): Cli {
  return y.command(
    'checkpoint <action> <dir>',
    'inspect DIR: what the checkpoints in a --checkpoint-dir hold, and whether each is complete',
    (y) =>
      y
        .positional('action', { choices: ['inspect'] as const, describe: 'what to do' })
        .positional('dir', { type: 'string', demandOption: true, describe: 'a --checkpoint-dir' })
        .example('$0 checkpoint inspect ck', 'each checkpoint in ck: scheme, step, world, complete or not, damaged shards named'),
    async (a) => {
      const reports = await inspectCheckpoints(a.dir);
      process.stdout.write(`${formatInspection(a.dir, reports)}\n`);
      // A damaged checkpoint (an index whose shards do not match it) is an error; an incomplete one is not.
      if (reports.some((r) => r.index && !r.complete) || reports.some((r) => r.problem)) exit(1);
    },
  );
}
