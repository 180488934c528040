// `zerowire rank`: join a coordinator and train (or, with --procs K, start K rank processes here).
import { fileURLToPath } from 'node:url';
import { hideBin } from 'yargs/helpers';
import { runRank } from '../../rank/main.js';
import { runProcs, withoutProcs } from '../../rank/procs.js';
import { ConfigError } from '../../shared/control/run-config.js';
import { modelSpec, parseModel } from '../../shared/models/registry.js';
import { parseBytes } from '../sizes.js';
import { LIVENESS } from '../../shared/transport/liveness.js';
import { createLogger } from '../log.js';
import { rankIdentity } from '../platform-env.js';
import type { Cli } from '../options.js';
import { heartbeat, straggle } from '../job.js';
import { joinToken, readPem } from '../secrets.js';
import { readTls, tlsOptions } from '../tls-options.js';

/** The CLI's entry script: what each of --procs K processes runs. */
const CLI = fileURLToPath(new URL('../zerowire.js', import.meta.url));

/** The rank's own options. */
function rankOptions(y: Cli) {
  return tlsOptions(y)
    .option('coordinator', { type: 'string', describe: 'ws://HOST:PORT of the coordinator (or MASTER_ADDR and MASTER_PORT)' })
    .option('rank-id', {
      type: 'number',
      describe: 'ask for this rank id (or RANK, or JOB_COMPLETION_INDEX); the coordinator refuses a second rank asking for it',
    })
    .option('host-id', { type: 'string', describe: "this rank's host, for ordering the ring so ranks of one host are neighbours (default: its address)" })
    .option('procs', { type: 'number', default: 1, describe: 'start this many rank processes on this host' })
    .option('advertise', { type: 'string', describe: 'address other ranks should dial (default: what the coordinator sees)' })
    .option('peer-host', { type: 'string', default: '0.0.0.0', describe: 'interface to listen on for the ring' })
    .option('peer-port', {
      type: 'number',
      default: 0,
      describe: 'port to listen on for the ring (0: any free port); with --procs K, the first of K consecutive ports',
    })
    .option('connect-timeout', { type: 'number', default: 60, describe: 'seconds to keep retrying the coordinator' })
    .option('max-rank-memory', { type: 'string', describe: "refuse to run if this rank's peak would exceed this, e.g. 8GB" })
    .option('iface', { type: 'string', describe: "report this network interface's kernel byte counters ('auto': the one the ring uses)" })
    .option('token', { type: 'string', describe: 'join token the coordinator requires (prefer ZEROWIRE_TOKEN)' })
    .option('token-file', { type: 'string', describe: 'read the join token from this file (a Docker or Kubernetes secret)' })
    .option('model', {
      type: 'string',
      describe: 'join only a run that trains this model (as --model writes it: 64,256,10, gpt:2,64,4,32, llama:..., a named shape)',
    })
    .option('heartbeat-timeout', {
      type: 'number',
      default: LIVENESS.timeoutMs / 1000,
      describe: 'seconds of silence from the coordinator or a ring peer after which this rank gives up, on a quiet link (the limit adapts up to 10/3 of this)',
    })
    .option('straggle-ms', {
      type: 'number',
      default: 0,
      describe: "make this rank a straggler: idle this long before every step (the others' time lands in the report's wait column)",
    });
}

/** The rank's help: joining first, then its links, then what is for experiments. */
function rankHelp(y: ReturnType<typeof rankOptions>) {
  return y
    .group(['coordinator', 'token', 'token-file', 'rank-id', 'host-id', 'procs', 'model'], 'Joining:')
    .group(['iface', 'advertise', 'peer-host', 'peer-port', 'connect-timeout', 'heartbeat-timeout', 'tls-cert', 'tls-key', 'tls-ca'], 'Network and liveness:')
    .group(['max-rank-memory', 'straggle-ms'], 'Limits and experiments:')
    .group(['log-level', 'log-format', 'blas', 'help', 'version'], 'Logs and the rest:')
    .example('$0 rank --coordinator ws://10.0.0.1:7070 --iface auto', 'join the coordinator on 10.0.0.1 and report the interface the ring uses')
    .example('$0 rank --coordinator ws://10.0.0.1:7070 --procs 4 --peer-port 7071', 'four ranks from this host, ring ports 7071-7074')
    .example('ZEROWIRE_TOKEN=... $0 rank --coordinator wss://10.0.0.1:7070 --tls-ca ca.pem', 'with a join token, over TLS');
}

export function rankCommand(y: Cli, exit: (code: number) => void): Cli {
  return y.command(
    'rank',
    'join a coordinator and train',
    (y) => rankHelp(rankOptions(y)),
    async (a) => {
      const log = createLogger(a.logLevel, 'rank', a.logFormat, a.wide);
      if (!Number.isInteger(a.procs) || a.procs < 1 || a.procs > 256) throw new ConfigError(`--procs: ${a.procs} must be an integer from 1 to 256`);
      const id = rankIdentity({ coordinator: a.coordinator, rankId: a.rankId, tls: a.tlsCert !== undefined }, process.env);
      if (a.procs > 1) {
        if (id.rankId !== undefined)
          throw new ConfigError(`--procs ${a.procs} with a rank id (${id.rankId}): each process needs its own id; start them one by one`);
        exit(await runProcs(a.procs, a.peerPort, CLI, withoutProcs(hideBin(process.argv)), log));
        return;
      }
      exit(
        await runRank(
          {
            coordinator: id.coordinator,
            rankId: id.rankId,
            worldSize: id.worldSize,
            hostId: a.hostId,
            advertise: a.advertise,
            peerHost: a.peerHost,
            peerPort: a.peerPort,
            connectTimeoutMs: a.connectTimeout * 1000,
            maxRankMemory: a.maxRankMemory === undefined ? undefined : parseBytes(a.maxRankMemory),
            iface: a.iface,
            token: joinToken(a.token, a.tokenFile),
            tlsCa: a.tlsCa === undefined ? undefined : readPem(a.tlsCa, '--tls-ca'),
            tls: readTls(a),
            straggleMs: straggle(a.straggleMs),
            model: a.model === undefined ? undefined : modelSpec({ model: parseModel(a.model) }).describe(),
            ...heartbeat(a.heartbeatTimeout),
          },
          log,
        ),
      );
    },
  );
}
