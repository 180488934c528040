// Runs one job on a fresh LAN of network namespaces (deploy/lan/lan.sh, root) for the LAN benches: a zerowire
// job (its report) or a peer's command on every rank host (its standard output).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Report } from '../shared/accounting/report.js';

const LAN = fileURLToPath(new URL('../../deploy/lan/lan.sh', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'zerowire-bench-lan-'));
let runs = 0;

/** lan.sh with `args`; its standard output. Throws with the lines that say why when it fails. */
function lanSh(args: string[], what: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync('bash', [LAN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, NODE: process.execPath },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: 15 * 60_000, // a hung job fails the bench (lan.sh cleans up on the TERM) instead of holding it
  });
  if (r.status !== 0) {
    process.stderr.write(
      r.stderr
        .split('\n')
        .filter((l) => /ERROR|Error|lan\.sh/.test(l))
        .join('\n'),
    );
    throw new Error(`lan.sh: ${what} ${r.status === null ? `stopped after 15 minutes (${r.signal})` : `exited with ${r.status}`}`);
  }
  process.stderr.write(`${what}: done\n`);
  return r.stdout;
}

/** One zerowire job on `hosts` x `procs` ranks at `rate` (`lan`: lan.sh's own options); its report. */
export function lanJob(rate: string, options: string[], steps: number, hosts = 4, procs = 1, lan: string[] = []): Report {
  const out = join(dir, `run-${runs++}.json`);
  const args = ['--hosts', String(hosts), '--procs', String(procs), '--rate', rate, ...lan, '--'];
  lanSh([...args, ...options, '--steps', String(steps), '--out', out, '--log-level', 'warn'], `${rate} ${options.join(' ')}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Report;
}

/** `command` on each of `hosts` rank hosts at `rate` (lan.sh --exec, with `env`); what they printed. */
export function lanExec(rate: string, command: string[], hosts: number, env: NodeJS.ProcessEnv = {}): string {
  return lanSh(['--exec', '--hosts', String(hosts), '--rate', rate, '--', ...command], `${rate} ${command.join(' ')}`, env);
}

/** Removes the reports' folder. */
export function lanCleanup(): void {
  rmSync(dir, { recursive: true, force: true });
}
