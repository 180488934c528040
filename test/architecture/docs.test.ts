// docs/architecture.md names every source file of shared/, coordinator/, rank/ and cli/, each in the row of
// its folder: a file added without a word there fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.(ts|wat)$/.test(p) && !/\.(d|generated)\.ts$/.test(p) ? [relative(ROOT, p)] : []; // generated at build time: not source
  });
}

/** The doc's table rows by the folder in their first cell: `tensor/`, `training/schemes/`, `coordinator/`, ... */
const rows = new Map([...DOC.matchAll(/^\| `([\w/-]+\/)` \|(.*)$/gm)].map((m) => [m[1], m[2]]));

describe('docs/architecture.md', () => {
  it('names every source file in the row of its folder', () => {
    const missing: string[] = [];
    for (const file of ['shared', 'coordinator', 'rank', 'cli'].flatMap((d) => sources(join(ROOT, d)))) {
      const path = file.replace(/^shared\//, '');
      const folder = [...rows.keys()].filter((f) => path.startsWith(f)).sort((a, b) => b.length - a.length)[0];
      const named = folder !== undefined && rows.get(folder)!.includes(`\`${path.slice(folder.length)}\``);
      if (!named) missing.push(`${file} (row ${folder ?? 'none'})`);
    }
    expect(missing, `files docs/architecture.md does not name:\n${missing.join('\n')}`).toEqual([]);
  });
});
