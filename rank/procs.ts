// `zerowire rank --procs K`: K rank processes on this host, each a full rank with its own ring port, all
// with this one's arguments. The coordinator sees them come from one address (or one --host-id), so the
// ring keeps them neighbours. Signals are passed on; the exit code is the first failure's, or 0.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';

/** This command line without its --procs option. */
export function withoutProcs(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--procs') i++;
    else if (!argv[i].startsWith('--procs=')) out.push(argv[i]);
  }
  return out;
}

export async function runProcs(k: number, cli: string, args: string[], log: Logger): Promise<number> {
  const env = { ...process.env };
  delete env.ZEROWIRE_PROCS;
  const children: ChildProcess[] = [];
  const exits = Array.from({ length: k }, (_, i) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: 'inherit', env });
    children.push(child);
    return new Promise<number>((resolve) => {
      child.once('error', (err) => {
        log.error(`cannot start rank process ${i}: ${err.message}`);
        resolve(1);
      });
      child.once('exit', (code, signal) => {
        // One failed rank fails the run: the others learn it from the coordinator and exit on their own.
        resolve(code ?? (signal === 'SIGINT' ? 130 : 143));
      });
    });
  });
  log.info({ procs: k, pids: children.map((c) => c.pid) }, `${k} rank processes on this host`);
  const pass = (sig: NodeJS.Signals) => () => children.forEach((c) => c.exitCode === null && c.kill(sig));
  const onInt = pass('SIGINT');
  const onTerm = pass('SIGTERM');
  process.on('SIGINT', onInt).on('SIGTERM', onTerm);
  try {
    const codes = await Promise.all(exits);
    return codes.find((c) => c !== 0) ?? 0;
  } finally {
    process.off('SIGINT', onInt).off('SIGTERM', onTerm);
  }
}
