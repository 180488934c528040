// Is a Docker engine reachable? Under CI=true a missing engine is a failure, elsewhere a reason to skip.
import { spawnSync } from 'node:child_process';

export function dockerEngine(): { ok: boolean; why: string } {
  const r = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 15_000 });
  if (r.error) return { ok: false, why: `no docker client (${r.error.message})` };
  if (r.status !== 0) return { ok: false, why: `no Docker engine reachable: ${(r.stderr || r.stdout).trim().split('\n')[0]}` };
  return { ok: true, why: `Docker engine ${r.stdout.trim()}` };
}

export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';
