// `zerowire local`: a coordinator and --world rank processes on this machine.
import { createLogger } from '../log.js';
import { runLocal } from '../local.js';
import { refuseOnThisMachine } from '../local-checks.js';
import { jobOptions, runOptions, type RunArgv, type Cli } from '../options.js';
import { readTls, tlsArgv, tlsOptions } from '../tls-options.js';

export function localCommand(y: Cli, exit: (code: number) => void): Cli {
  return y.command(
    'local',
    'a coordinator and --world rank processes on this machine',
    (y) => tlsOptions(runOptions(y)),
    async (a) => {
      const log = createLogger(a.logLevel, 'local', a.logFormat);
      const job = jobOptions(a as unknown as RunArgv, '127.0.0.1', 0, false);
      refuseOnThisMachine(job.config, job.world as number, a.model);
      const tls = readTls(a); // the ranks read the same files
      exit(await runLocal({ ...job, tls, world: job.world as number, logLevel: a.logLevel, logFormat: a.logFormat, rankArgs: tlsArgv(a) }, log));
    },
  );
}
