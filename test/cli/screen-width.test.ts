// What the README's commands print fits a 120-column terminal: each run in a pseudo-terminal (util-linux's
// script) of 120 columns, every line of stdout and stderr measured; --wide keeps every column.
import { execFile } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

const COLS = 120;

/** `args` run on a pseudo-terminal `cols` wide: what it showed, one string per line (colours stripped). */
function onTerminal(args: string[], cols = COLS): Promise<string[]> {
  const command = `stty cols ${cols} rows 50; COLUMNS=${cols} exec ${[process.execPath, CLI, ...args].map((x) => `'${x}'`).join(' ')}`;
  return new Promise((resolve, reject) =>
    execFile('script', ['-qec', command, '/dev/null'], { maxBuffer: 1 << 26, timeout: 120_000 }, (err, stdout) =>
      err
        ? reject(new Error(`${err.message}\n${stdout.slice(-2000)}`))
        : resolve(
            stripVTControlCharacters(stdout).split(/\r?\n|\r/), // a progress line redrawn after \r is a line of its own
          ),
    ),
  );
}

const tooWide = (lines: string[]) => lines.filter((l) => [...l].length > COLS);

describe(`on a ${COLS}-column terminal`, () => {
  it('a local run of every scheme (npm start at 2 steps): the table keeps its answers and names what it left out; --wide keeps them all', async () => {
    const run = ['local', '--world', '4', '--scheme', 'all', '--steps', '2', '--preflight', 'off'];
    const fitted = await onTerminal(run);
    expect(tooWide(fitted)).toEqual([]);
    const header = fitted.find((l) => /^scheme /.test(l))!;
    for (const column of ['measured', 'payload', 'total', 'exposed', 'loss']) expect(header).toContain(column);
    expect(fitted.join(' ')).toMatch(/\(left out to fit 120 columns: .*fwd\/bwd\/opt.*; --wide shows them\)/);
    const wide = await onTerminal([...run, '--wide']);
    expect(wide.find((l) => /^scheme /.test(l))).toMatch(/fwd\/bwd\/opt/);
    expect(tooWide(wide).length).toBeGreaterThan(0);
  }, 120_000);

  it('plan with a config.json and a ds_config: the readings, the prediction and what to change', async () => {
    const lines = await onTerminal([
      'plan',
      '--hf-config',
      'test/fixtures/hf/llama-3-8b.json',
      '--deepspeed',
      'deploy/deepspeed/ds_z3_config.json',
      '--world',
      '8',
      '--compute',
      'model:h100',
    ]);
    expect(tooWide(lines)).toEqual([]);
    expect(lines.join('\n')).toMatch(/^\(1\) zero_optimization\.stage 3 → \d/m); // each change's keys under the table
  });

  it("plan --need as the README runs it: every scheme's answer on the screen, the reasons as notes", async () => {
    const lines = await onTerminal(['plan', '--need', '10', '--compute', 'model:h100', '--model', 'llama2-7b', '--world', '32', '--hosts', '4']);
    expect(tooWide(lines)).toEqual([]);
    for (const scheme of ['DP', 'ZeRO-1', 'ZeRO-2', 'ZeRO-3', 'HSDP', 'ZeRO++']) expect(lines.some((l) => l.startsWith(`${scheme} `))).toBe(true);
    expect(lines.join('\n')).toMatch(/^ZeRO-3 +\d+ +[\d.]+ +[\d.]+ +\d+$/m);
  });

  it('simulate of a ring of 64 ranks on 16 hosts: the ring named by the links that cross, the first few and a count', async () => {
    const lines = await onTerminal([
      'simulate',
      '--compute',
      'model:h100',
      '--model',
      'gpt2-xl',
      '--world',
      '64',
      '--hosts',
      '16',
      '--steps',
      '2',
      '--scheme',
      'dp,zero3',
    ]);
    expect(tooWide(lines)).toEqual([]);
    expect(lines.join('\n')).toMatch(/ring by host: 16 of 64 links cross hosts .* and 8 more that cross/s);
  }, 120_000);
});
