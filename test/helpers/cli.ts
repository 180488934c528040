// Run the compiled CLI as a real process (built by `npm test`'s pretest step).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/zerowire.js', import.meta.url));

/** The compiled twin of a source file (`rank/compute-thread.ts` -> dist/rank/compute-thread.js): what a
 *  worker thread or a forked process runs, since those load JavaScript, not the TypeScript vitest reads. */
export const compiled = (sourcePath: string): URL => new URL(`../../dist/${sourcePath.replace(/\.ts$/, '.js')}`, import.meta.url);

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function startCli(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ZEROWIRE_LOG_FORMAT: 'json', ...env, FORCE_COLOR: '0' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<CliResult>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export async function runCli(args: string[], timeoutMs = 60_000, env: Record<string, string> = {}): Promise<CliResult> {
  const { child, done } = startCli(args, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const r = await done;
  clearTimeout(timer);
  return r;
}

/** JSON log lines (pino, --log-format json, which startCli sets) out of a process's stderr, also those forwarded with a "[rank r]" or "[proc i]" prefix. */
export function logLines(stderr: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of stderr.split('\n')) {
    const at = line.indexOf('{');
    if (at < 0) continue;
    try {
      out.push(JSON.parse(line.slice(at)));
    } catch {
      /* not a log line */
    }
  }
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Wait until `pred` holds or `ms` pass; returns its last value. */
export async function eventually(pred: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pred();
}

/** `zerowire coordinator ARGS` on a free loopback port; resolves once it listens, with that port. */
export async function startCoordinator(args: string[], env: Record<string, string> = {}) {
  const c = startCli(['coordinator', '--host', '127.0.0.1', '--port', '0', ...args], env);
  let err = '';
  c.child.stderr!.on('data', (d) => (err += d));
  const listening = () => logLines(err).find((l) => typeof l.port === 'number' && /waiting for/.test(String(l.msg)));
  if (!(await eventually(() => listening() !== undefined, 10_000))) throw new Error(`the coordinator did not start:\n${err}`);
  return { ...c, port: listening()!.port as number, stderr: () => err };
}
