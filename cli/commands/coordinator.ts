// `zerowire coordinator`: wait for --world ranks, run the schemes, print the report.
import { runCoordinatorJob } from '../../coordinator/main.js';
import { ConfigError } from '../../shared/control/run-config.js';
import { createLogger } from '../log.js';
import { jobOptions, readPem, runOptions, type RunArgv, type Cli } from '../options.js';

export function coordinatorCommand(y: Cli, exit: (code: number) => void): Cli {
  return y.command(
    'coordinator',
    'wait for --world ranks, run the schemes, print the report',
    (y) =>
      runOptions(y)
        .option('port', { type: 'number', default: 7070 })
        .option('host', { type: 'string', default: '0.0.0.0' })
        .option('discover', {
          type: 'string',
          describe: "a DNS name with one address per rank (the compose service 'rank', Swarm's tasks.rank): auto waits for all of them",
        })
        .option('min-world', {
          type: 'number',
          describe:
            "if fewer than --world ranks joined in time, run with them when at least this many did (a warning says so); 'auto' never settles below 2 unless this is 1",
        })
        .option('settle', { type: 'number', default: 3, describe: 'with --world auto: seconds without a new rank before the run starts' })
        .option('tls-cert', { type: 'string', describe: 'PEM certificate: serve wss:// (with --tls-key)' })
        .option('tls-key', { type: 'string', describe: 'PEM private key for --tls-cert' }),
    async (a) => {
      const log = createLogger(a.logLevel, 'coordinator');
      if ((a.tlsCert === undefined) !== (a.tlsKey === undefined)) throw new ConfigError('--tls-cert and --tls-key go together');
      const tls = a.tlsCert ? { cert: readPem(a.tlsCert, '--tls-cert'), key: readPem(a.tlsKey!, '--tls-key') } : undefined;
      if (a.minWorld !== undefined && !(Number.isInteger(a.minWorld) && a.minWorld >= 1))
        throw new ConfigError(`--min-world: ${a.minWorld} must be a positive integer`);
      exit(
        await runCoordinatorJob(
          { ...jobOptions(a as unknown as RunArgv, a.host, a.port, true), discover: a.discover, settleMs: a.settle * 1000, minWorld: a.minWorld, tls },
          log,
        ),
      );
    },
  );
}
