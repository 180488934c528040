#!/usr/bin/env node
// The one entry point: zerowire coordinator | rank | local | links | plan | simulate | compare | consolidate | checkpoint. Every option can also come from an
// environment variable ZEROWIRE_<OPTION> (e.g. ZEROWIRE_COORDINATOR, ZEROWIRE_WORLD); WORLD_SIZE is read
// for --world like torchrun does.
import { hideBin } from 'yargs/helpers';
import { ConfigError } from '../shared/control/run-config.js';
import { BIND_EXIT_CODE, BindError } from '../shared/transport/bind-error.js';
import { baseCli } from './options.js';
import { checkpointCommand } from './commands/checkpoint.js';
import { compareCommand } from './commands/compare.js';
import { consolidateCommand } from './commands/consolidate.js';
import { coordinatorCommand } from './commands/coordinator.js';
import { localCommand } from './commands/local.js';
import { planCommand } from './commands/plan.js';
import { rankCommand } from './commands/rank.js';
import { simulateCommand } from './commands/simulate.js';

async function main(): Promise<number> {
  let exitCode = 0;
  const exit = (code: number) => (exitCode = code);
  let y = baseCli(hideBin(process.argv));
  // local first: a whole run on this machine is where a newcomer starts (the README's npm start).
  for (const command of [localCommand, coordinatorCommand, rankCommand, planCommand, simulateCommand, consolidateCommand, checkpointCommand])
    y = command(y, exit);
  y = compareCommand(coordinatorCommand(y, exit, true));
  await y
    .demandCommand(1, 'name a command: local, coordinator, rank, links, plan, simulate, compare, consolidate or checkpoint')
    .example('$0 local', 'start here: a coordinator and 4 ranks on this machine, DP against ZeRO-1/2/3 (what npm start runs)')
    .example('$0 plan --params 13e9 --world 16 --memory 80GB', "each scheme's model states per rank, and whether they fit")
    .example('$0 coordinator --world 4   (then on each machine: $0 rank --coordinator ws://HOST:7070)', 'a run across machines')
    .epilogue('More: README.md, and docs/options.md for every option. `zerowire COMMAND --help` for a command.')
    .strict()
    .fail((msg, err) => {
      // Bad usage and bad option values exit 2; anything else is a runtime failure (exit 1).
      if (err && !(err instanceof ConfigError || err instanceof RangeError)) throw err;
      throw new UsageError(err ? err.message : msg);
    })
    .help()
    .parseAsync();
  return exitCode;
}

class UsageError extends Error {}

const COMMANDS = ['coordinator', 'rank', 'local', 'links', 'plan', 'simulate', 'compare', 'consolidate', 'checkpoint'];

main().then(
  (code) => process.exit(code),
  (err) => {
    // One line: a bad value's message names the option and what to do; yargs' own (an unknown option, a
    // missing command) points at the help that lists them.
    const usage = err instanceof UsageError || err instanceof ConfigError || err instanceof RangeError;
    const command = hideBin(process.argv).find((x) => !x.startsWith('-'));
    const help = err instanceof UsageError ? ` (see zerowire ${command && COMMANDS.includes(command) ? `${command} ` : ''}--help)` : '';
    process.stderr.write(`zerowire: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}${help}\n`);
    process.exit(usage ? 2 : err instanceof BindError ? BIND_EXIT_CODE : 1);
  },
);
