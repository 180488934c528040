// `npx zerowire` as the README runs it in a checkout: this checkout's build, nothing installed under the npm
// cache's _npx (npm exec installs a project whose package.json names the command as its bin; an interrupted
// install there broke every later npx in the checkout). Each case has its own npm cache folder.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const caches = mkdtempSync(join(tmpdir(), 'zerowire-npx-'));
afterAll(() => rmSync(caches, { recursive: true, force: true }));

/** What npm exec left under a cache's _npx: each folder it made there. */
const npxFolders = (cache: string) => {
  try {
    return readdirSync(join(cache, '_npx'));
  } catch {
    return [];
  }
};

function npx(cache: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('npx', ['zerowire', ...args], { cwd: ROOT, env: { ...process.env, npm_config_cache: cache } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('npx zerowire in the checkout', () => {
  it('runs the build here and creates nothing under _npx, even where an earlier install left an empty folder there', async () => {
    const fresh = join(caches, 'fresh');
    const v = await npx(fresh, ['--version']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(npxFolders(fresh)).toEqual([]);
    // What an interrupted install used to leave: a folder with no package.json, which npm cannot read.
    const broken = join(caches, 'broken');
    mkdirSync(join(broken, '_npx', '5eec080bf95e7d97'), { recursive: true });
    const again = await npx(broken, ['--version']);
    expect(again.code, again.stderr).toBe(0);
    expect(npxFolders(broken)).toEqual(['5eec080bf95e7d97']);
  });

  it('a SIGINT during the first npx zerowire leaves the next one working', async () => {
    const cache = join(caches, 'interrupted');
    const first = spawn('npx', ['zerowire', 'local', '--world', '2', '--steps', '2000', '--model', '16,32,4', '--preflight', 'off'], {
      cwd: ROOT,
      env: { ...process.env, npm_config_cache: cache },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    first.stderr.resume();
    const exited = new Promise<number | null>((resolve) => first.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
    // Where the old install was (npm exec resolving and installing, before the command starts).
    await new Promise((r) => setTimeout(r, 300));
    first.kill('SIGINT');
    expect(await exited).not.toBe(0);
    const next = await npx(cache, ['--version']);
    expect(next.code, next.stderr).toBe(0);
    expect(npxFolders(cache)).toEqual([]);
  });
});
