// --hostfile in DeepSpeed's format: hosts and slots read, bad lines refused naming the line; plan with it is
// plan with the world and shard group it implies; the coordinator's world is its slots.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHostfile } from '../../cli/hostfile.js';
import { runCli } from '../helpers/cli.js';

describe('--hostfile', () => {
  it('reads HOST slots=N lines, comments and blank lines aside', () => {
    const h = parseHostfile('# two A800 hosts\nworker-1 slots=8\n\nworker-2 slots=8  # the second\n', 'hf');
    expect(h).toEqual({
      path: 'hf',
      hosts: [
        { name: 'worker-1', slots: 8 },
        { name: 'worker-2', slots: 8 },
      ],
      world: 16,
      perHost: 8,
    });
    expect(parseHostfile('a slots=4\nb slots=2\nc', 'hf')).toMatchObject({ world: 7, perHost: null });
    expect(() => parseHostfile('a slots=x', 'hf')).toThrow(/^--hostfile hf line 1: "a slots=x" is not HOST slots=N$/);
    expect(() => parseHostfile('a slots=2\na slots=2', 'hf')).toThrow(/^--hostfile hf line 2: host a is listed twice$/);
    expect(() => parseHostfile('# nothing\n', 'hf')).toThrow(/^--hostfile hf: no host in it/);
  });

  it('plan with a hostfile is plan with its world and a host as the shard group; a --world that disagrees is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-hostfile-'));
    try {
      const file = join(dir, 'hostfile');
      writeFileSync(file, 'worker-1 slots=8\nworker-2 slots=8\n');
      const [byFile, byFlags] = await Promise.all([
        runCli(['plan', '--hostfile', file, '--model', 'llama3-8b', '--memory', '80GB'], 30_000),
        runCli(['plan', '--world', '16', '--shard-group', '8', '--model', 'llama3-8b', '--memory', '80GB'], 30_000),
      ]);
      expect(byFile.code, byFile.stderr).toBe(0);
      expect(byFile.stdout).toBe(byFlags.stdout);
      expect(byFile.stdout).toMatch(/^HSDP /m);
      const bad = await runCli(['plan', '--hostfile', file, '--world', '8', '--params', '7e9'], 30_000);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim()).toBe(`zerowire: --world 8 and --hostfile ${file} disagree: its 2 hosts have 16 slots`);
      const coordinator = await runCli(['coordinator', '--hostfile', file, '--world', '4', '--port', '0'], 30_000);
      expect(coordinator.code).toBe(2);
      expect(coordinator.stderr.trim()).toBe(`zerowire: --world 4 and --hostfile ${file} disagree: its 2 hosts have 16 slots`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
