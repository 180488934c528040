// `zerowire rank --procs K`: K rank processes on this host, each a full rank with its own ring port, all
// with this one's arguments. The coordinator sees them come from one address (or one --host-id), so the
// ring keeps them neighbours. With --peer-port P they listen on P ... P+K-1 (one range to open in a
// firewall); with 0, on any free ports. Signals are passed on. A process that fails is reported at once;
// the others are stopped if they have not ended within a grace period (in a running job they learn of the
// failure from the coordinator and end by themselves, leaving it to name the culprit; before the run, a
// sibling that could not start would leave them waiting for a world that never fills). The exit code is the
// first failure's, or 0.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';

/** How long the other processes have to end by themselves after one failed. */
const SIBLING_GRACE_MS = 3000;

/** This command line without its --procs and --peer-port options (each process gets its own port). */
export function withoutProcs(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--procs' || argv[i] === '--peer-port') i++;
    else if (!argv[i].startsWith('--procs=') && !argv[i].startsWith('--peer-port=')) out.push(argv[i]);
  }
  return out;
}

/** The ring port of process i: consecutive from `first`, or any free one. */
function peerPortOf(first: number, i: number): number {
  return first === 0 ? 0 : first + i;
}

export async function runProcs(k: number, peerPort: number, cli: string, args: string[], log: Logger): Promise<number> {
  if (peerPort !== 0 && peerPort + k - 1 > 65535)
    throw new RangeError(`--peer-port ${peerPort} with --procs ${k}: ports up to ${peerPort + k - 1} do not exist`);
  const env = { ...process.env };
  delete env.ZEROWIRE_PROCS;
  delete env.ZEROWIRE_PEER_PORT;
  const children: ChildProcess[] = [];
  let failed: number | null = null;
  let grace: NodeJS.Timeout | null = null;
  const stopAll = (sig: NodeJS.Signals) => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill(sig));
  const exits = Array.from({ length: k }, (_, i) => {
    const port = peerPortOf(peerPort, i);
    const child = spawn(process.execPath, [cli, ...args, '--peer-port', String(port)], { stdio: 'inherit', env });
    children.push(child);
    return new Promise<number>((resolve) => {
      child.once('error', (err) => {
        log.error(`cannot start rank process ${i + 1} of ${k}: ${err.message}`);
        resolve(1);
      });
      child.once('exit', (code, signal) => {
        const status = code ?? (signal === 'SIGINT' ? 130 : 143);
        if (status !== 0 && failed === null) {
          failed = i;
          log.error(`rank process ${i + 1} of ${k} (pid ${child.pid}, ring port ${port || 'any'}) exited with code ${status}`);
          grace = setTimeout(() => {
            const left = children.filter((c) => c.exitCode === null && c.signalCode === null).length;
            if (left) log.error(`stopping the other ${left} rank process${left > 1 ? 'es' : ''} on this host`);
            stopAll('SIGTERM');
          }, SIBLING_GRACE_MS);
        }
        resolve(status);
      });
    });
  });
  const ports = peerPort === 0 ? 'any free ports' : `ring ports ${peerPort}-${peerPort + k - 1}`;
  log.info({ procs: k, pids: children.map((c) => c.pid) }, `${k} rank processes on this host, ${ports}`);
  const onInt = () => stopAll('SIGINT');
  const onTerm = () => stopAll('SIGTERM');
  process.on('SIGINT', onInt).on('SIGTERM', onTerm);
  try {
    const codes = await Promise.all(exits);
    return failed === null ? (codes.find((c) => c !== 0) ?? 0) : codes[failed];
  } finally {
    process.off('SIGINT', onInt).off('SIGTERM', onTerm);
    if (grace) clearTimeout(grace);
  }
}
