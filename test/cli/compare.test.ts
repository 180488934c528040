// `zerowire compare`: reports of real runs side by side; reports with no scheme in common refused in one line;
// what differs printed as `setting: A → B`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'zerowire-compare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SMALL = ['local', '--world', '2', '--model', '8,16,4', '--batch', '8', '--samples', '32', '--steps', '3', '--preflight', 'off'];

async function run(name: string, args: string[]): Promise<string> {
  const out = join(dir, `${name}.json`);
  const r = await runCli([...SMALL, ...args, '--out', out], 60_000);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

describe('zerowire compare', () => {
  it('says when reports share no scheme, and prints what differs as setting: A → B', async () => {
    const [dp, z3, both] = await Promise.all([
      run('dp', ['--scheme', 'dp']),
      run('z3', ['--scheme', 'zero3', '--wire-dtype', 'fp32']),
      run('both', ['--scheme', 'dp,zero3', '--wire-dtype', 'fp32']),
    ]);
    const none = await runCli(['compare', dp, z3]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr.trimEnd().split('\n')).toEqual(['zerowire: compare: the reports share no scheme (dp: DP; z3: ZeRO-3): nothing to set side by side']);

    const side = await runCli(['compare', dp, both]);
    expect(side.code, side.stderr).toBe(0);
    expect(side.stdout).toMatch(/^DP {2}.*\d\.\d\d$/m);
    expect(side.stdout).toContain('runs, in order: dp → both');
    const differs = side.stdout.split('\n').find((l) => l.startsWith('what differs: '));
    expect(differs).toContain('scheme: dp → dp,zero3');
    expect(differs).toContain('wire-dtype: bf16 → fp32');
    expect(side.stdout).not.toMatch(/[0-9a-f]{64}|"/); // no raw JSON, no checksums
    expect(side.stdout).toContain('left out (not in every report): ZeRO-3');
  }, 90_000);
});
