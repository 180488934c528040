// SIGINT and SIGTERM sent to the process the user started, `npx zerowire local` (not its group, as `timeout`,
// a CI cancel or a process manager sends them): the run ends within 2 s and leaves no process behind.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { alive, eventually } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every process below `pid`, from /proc. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf) {
      if (parent !== p) continue;
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

describe.each(['SIGTERM', 'SIGINT'] as const)('%s to npx zerowire local', (signal) => {
  it('during training: npx exits within 2 s, and the coordinator and every rank process are gone', async () => {
    const npx = spawn('npx', ['zerowire', 'local', '--world', '2', '--steps', '2000', '--model', '64,256,10', '--batch', '16', '--preflight', 'off'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    npx.stderr.on('data', (d) => (err += d));
    npx.stdout.resume();
    const exited = new Promise<number>((resolve) => npx.once('exit', () => resolve(Date.now())));
    expect(await eventually(() => /DP step/.test(err), 60_000), err.slice(-800)).toBe(true);
    const tree = descendants(npx.pid!);
    const run = tree.filter((p) => /zerowire/.test(commandOf(p)));
    console.log(`${signal}: npx ${npx.pid} and below it ${run.map((p) => `${p} (${commandOf(p).split(' ').slice(1, 4).join(' ')})`).join(', ')}`);
    expect(run.filter((p) => / rank /.test(commandOf(p)))).toHaveLength(2);
    const sent = Date.now();
    npx.kill(signal);
    const ms = (await exited) - sent;
    console.log(`${signal}: npx exited after ${ms} ms`);
    expect(ms).toBeLessThan(2000);
    expect(await eventually(() => tree.every((p) => !alive(p)), 2000), `left: ${tree.filter(alive).map(commandOf).join('; ')}`).toBe(true);
  }, 90_000);
});
