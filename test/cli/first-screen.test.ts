// What a newcomer sees first: `npm start`'s run and the README's GPT run, on loopback. No false slow-link
// verdict, one median per kind of link wherever one is printed, and the sample columns (the README's, and the
// GPT run's in docs/gpt.md) as the report prints them now.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { mediansByKind } from '../helpers/report-text.js';

const read = (file: string) => readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), 'utf8');
const README = read('README.md');
const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { scripts: { start: string } };

/** The words of a table's two header rows: the README's samples against what a run prints. */
const headerWords = (text: string) =>
  text
    .split('\n')
    .slice(0, 2)
    .map((l) => l.trim().split(/\s+/).join(' '));

/** The code block of `doc` that starts with the table's header, after `after`. */
function readmeSample(after: string, doc = README): string {
  const from = doc.indexOf(after);
  expect(from, `the document has "${after}"`).toBeGreaterThanOrEqual(0);
  const start = doc.lastIndexOf('```\n', doc.indexOf('resident B/param', from)) + 4;
  return doc.slice(start, doc.indexOf('```', start));
}

function checkFirstScreen(stdout: string): void {
  expect(stdout).toMatch(/^verdict: no link or host stands out$/m);
  expect(stdout).not.toMatch(/verdict: (pre-flight|during the run)/);
  const medians = mediansByKind(stdout);
  expect(medians.size, stdout).toBeGreaterThan(0);
  for (const [kind, values] of medians) expect([...values], `the medians of the ${kind}`).toHaveLength(1);
  expect(stdout).not.toMatch(/late entering/); // one host: no lateness to compare
}

describe("a newcomer's first screen", () => {
  it("npm start's run: no slow-link verdict on loopback, one median per kind, the README's columns", async () => {
    const args = pkg.scripts.start.replace(/^node dist\/cli\/zerowire\.js /, '').split(' ');
    expect(args).toEqual(['local', '--world', '4', '--scheme', 'all']);
    const r = await runCli(args, 120_000);
    expect(r.code, r.stderr).toBe(0);
    checkFirstScreen(r.stdout);
    expect(headerWords(r.stdout)).toEqual(headerWords(readmeSample('## What `npm start` prints')));
  }, 150_000);

  it("the README's GPT run (fewer steps): the same", async () => {
    const command = /npx zerowire (local --world 4 --model gpt:[^\n]*)/.exec(README)![1];
    const r = await runCli(command.replace(/--steps \d+/, '--steps 6').split(' '), 120_000);
    expect(r.code, r.stderr).toBe(0);
    checkFirstScreen(r.stdout);
    expect(headerWords(r.stdout)).toEqual(headerWords(readmeSample('npx zerowire local --world 4 --model gpt', read('docs/gpt.md')))); // its table lives there
  }, 150_000);
});
