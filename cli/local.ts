// `zerowire local`: a coordinator in this process and N rank processes on this machine (loopback). Every
// child is stopped when the run ends, fails, or this process is interrupted.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { runCoordinatorJob, type CoordinatorJobOptions } from '../coordinator/main.js';
import { LIVENESS } from '../shared/transport/liveness.js';
import { LOG_COLUMNS_ENV } from './log.js';

const CLI = fileURLToPath(new URL('./zerowire.js', import.meta.url));

export interface LocalOptions extends CoordinatorJobOptions {
  world: number;
  logLevel: string;
  logFormat: string;
  wide?: boolean; // --wide: the ranks' log lines whole too
  rankArgs: string[]; // extra arguments for every rank
}

/** Settings of every process rather than of the run: they go to the ranks as they are. */
const PROCESS_SETTINGS = new Set(['ZEROWIRE_BLAS']);

/** The environment for rank processes: ours, minus ZEROWIRE_* run options meant for this coordinator
 *  (a rank would read ZEROWIRE_MODEL as its own --model, for instance). */
function rankEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ZEROWIRE_') || PROCESS_SETTINGS.has(k)));
}

/** A child's lines on our stderr, prefixed with its rank id once the ring has given it one (before that, with
 *  the order it was started in). */
function forward(child: ChildProcess, tag: () => string): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => process.stderr.write(`${tag()} ${line}\n`));
  }
}

/** On a terminal, how wide a rank's log lines may be: this terminal's width less the `[rank r] ` before them. */
function rankLogColumns(wide: boolean | undefined): Record<string, string> {
  if (wide || !process.stderr.isTTY || !(process.stderr.columns > 0)) return {};
  return { [LOG_COLUMNS_ENV]: String(Math.max(40, process.stderr.columns - '[rank 999] '.length)) };
}

/** One rank process, dialling the coordinator on `port` with the run's token. */
function spawnRank(opts: LocalOptions, port: number, token: string): ChildProcess {
  const hb = String((opts.heartbeatTimeoutMs ?? LIVENESS.timeoutMs) / 1000);
  const args = ['--log-level', opts.logLevel, '--log-format', opts.logFormat, '--peer-host', '127.0.0.1', '--heartbeat-timeout', hb, ...opts.rankArgs];
  return spawn(process.execPath, [CLI, 'rank', '--coordinator', `${opts.tls ? 'wss' : 'ws'}://127.0.0.1:${port}`, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...rankEnv(), ZEROWIRE_TOKEN: token, FORCE_COLOR: process.stderr.isTTY ? '1' : '0', ...rankLogColumns(opts.wide) },
  });
}

export async function runLocal(opts: LocalOptions, log: Logger): Promise<number> {
  const children: ChildProcess[] = [];
  let finished = false;
  const exits: Promise<void>[] = [];
  // Only the ranks started here may join: a fresh token, handed over in the environment (not argv, which
  // every local user can read with ps).
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const rankOf = new Map<number, number>(); // pid -> rank id, from the ring
  const code = await runCoordinatorJob({ ...opts, token, host: '127.0.0.1', port: 0 }, log, (port, coord) => {
    const narrate = coord.onRing;
    coord.onRing = (ranks) => {
      for (const r of ranks) rankOf.set(r.pid, r.rank);
      narrate(ranks);
    };
    for (let i = 0; i < opts.world; i++) {
      const child = spawnRank(opts, port, token);
      children.push(child);
      forward(child, () => (rankOf.has(child.pid!) ? `[rank ${rankOf.get(child.pid!)}]` : `[proc ${i}]`));
      exits.push(
        new Promise((resolve) => {
          child.once('exit', (code, signal) => {
            // The coordinator sees a joined rank's sockets close at once and names rank, host and step; this
            // only covers a process that died before joining, so it waits a moment to not pre-empt that.
            if (!finished && code !== 0)
              setTimeout(() => void coord.abort(`rank process ${i} (pid ${child.pid}) exited with ${signal ?? `code ${code}`}`), 500).unref();
            resolve();
          });
          child.once('error', (err) => {
            void coord.abort(`cannot start rank process ${i}: ${err.message}`);
            resolve();
          });
        }),
      );
    }
  }).finally(() => (finished = true));
  // After a clean finish the ranks exit on their own; after a failure, or past a grace period, they are stopped.
  const live = () => children.filter((c) => c.exitCode === null && c.signalCode === null);
  if (code !== 0) for (const c of live()) c.kill('SIGTERM');
  const grace = setTimeout(() => {
    for (const c of live()) c.kill('SIGKILL');
  }, 5000);
  await Promise.all(exits);
  clearTimeout(grace);
  const failed = children.filter((c) => c.exitCode !== 0);
  if (code === 0 && failed.length) {
    log.error(`${failed.length} rank process(es) exited with an error`);
    return 1;
  }
  return code;
}
