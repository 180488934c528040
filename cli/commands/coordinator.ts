// `zerowire coordinator`: wait for --world ranks, run the schemes, print the report.
import { print } from '../print.js';
import { runCoordinatorJob } from '../../coordinator/main.js';
import { ConfigError } from '../../shared/control/run-config.js';
import { readTls, tlsOptions } from '../tls-options.js';
import { createLogger } from '../log.js';
import { runHelp, runOptions, type Cli } from '../options.js';
import { jobOptions } from '../job.js';
import { readingText } from '../model-options.js';
import { becomeOwnerOf } from '../as-owner.js';

/** `links`: the same coordinator, which wires the ranks, runs the pre-flight (all pairs by default),
 *  prints what it measured and lets them go, training nothing. */
const LINKS_EXAMPLES: [string, string][] = [
  ['$0 links --world 4', 'every pair of hosts measured, the slow link or host named (ranks: zerowire rank --coordinator ws://THIS:7070)'],
  ['$0 links --world 8 --preflight ring', "only the ring's links"],
];

const COORDINATOR_EXAMPLES: [string, string][] = [
  ['$0 coordinator --world 4', 'then on each machine: zerowire rank --coordinator ws://THIS_HOST:7070 --iface auto'],
  ['$0 coordinator --world auto --discover rank', 'as compose runs it: as many ranks as the DNS name rank has addresses'],
  ['$0 coordinator --world 8 --scheme dp,zero3 --out report.json --html report.html', 'two schemes, the JSON report and the page'],
];

export function coordinatorCommand(y: Cli, exit: (code: number) => void, linksOnly = false): Cli {
  return y.command(
    linksOnly ? 'links' : 'coordinator',
    linksOnly
      ? 'wait for --world ranks, measure their links (--preflight all-pairs or ring), report which is slow, train nothing'
      : 'wait for --world ranks, run the schemes, print the report',
    (y) =>
      runHelp(tlsOptions(runOptions(y, true)), linksOnly ? LINKS_EXAMPLES : COORDINATOR_EXAMPLES, [
        'port',
        'host',
        'hostfile',
        'discover',
        'min-world',
        'settle',
        'as-owner-of',
      ])
        .option('port', { type: 'number', default: 7070, describe: 'port the ranks join on (0: any free port, logged)' })
        .option('hostfile', { type: 'string', describe: "DeepSpeed's hostfile (HOST slots=N a line): the world is its slots" })
        .option('host', { type: 'string', default: '0.0.0.0', describe: 'interface to listen on (0.0.0.0: every one)' })
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
        .option('as-owner-of', { type: 'string', describe: "started as root, first become this folder's owner (compose: ./results)" })
        .option('preflight', {
          choices: linksOnly ? ['ring', 'all-pairs'] : ['off', 'ring', 'all-pairs'],
          default: linksOnly ? 'all-pairs' : 'ring',
          describe:
            'before the schemes, measure each ring link (ring) or every pair of hosts (all-pairs): rate with one stream and several, round trip (docs/lan.md)',
        }),
    async (a) => {
      if (a.asOwnerOf !== undefined) becomeOwnerOf(a.asOwnerOf);
      const log = createLogger(a.logLevel, linksOnly ? 'links' : 'coordinator', a.logFormat, a.wide);
      const tls = readTls(a);
      const { model, deepspeed, ...job } = jobOptions(a, a.host, a.port, true);
      for (const text of [model.reading && readingText(model), deepspeed]) if (text) print(a, `${text}\n`);
      exit(
        await runCoordinatorJob(
          {
            ...job,
            discover: a.discover,
            settleMs: a.settle * 1000,
            minWorld: minWorld(a.minWorld),
            tls,
            linksOnly,
          },
          log,
        ),
      );
    },
  );
}

function minWorld(n: number | undefined): number | undefined {
  if (n !== undefined && !(Number.isInteger(n) && n >= 1)) throw new ConfigError(`--min-world: ${n} must be a positive integer`);
  return n;
}
