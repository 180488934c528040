// docs/architecture.md is a map: every source file of shared/, coordinator/, rank/, simulator/ and cli/ is named in the
// section of its folder (a file added without a word there fails here), and no line runs on past 300
// characters (a map is read, not scrolled sideways).
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

/** The doc's folder sections by the folder in their heading (`### \`models/gpt/\``), each with its text. */
function sections(): Map<string, string> {
  const out = new Map<string, string>();
  const parts = DOC.split(/^### /m).slice(1);
  for (const p of parts) {
    const m = /^`([\w/-]+\/)`/.exec(p);
    if (m) out.set(m[1], p.slice(m[0].length));
  }
  return out;
}

describe('docs/architecture.md', () => {
  it('names every source file in the section of its folder', () => {
    const map = sections();
    const missing: string[] = [];
    for (const file of ['shared', 'coordinator', 'rank', 'simulator', 'cli'].flatMap((d) => sources(join(ROOT, d)))) {
      const path = file.replace(/^shared\//, '');
      const folder = [...map.keys()].filter((f) => path.startsWith(f)).sort((a, b) => b.length - a.length)[0];
      const named = folder !== undefined && map.get(folder)!.includes(`\`${path.slice(folder.length)}\``);
      if (!named) missing.push(`${file} (section ${folder ?? 'none'})`);
    }
    expect(missing, `files docs/architecture.md does not name:\n${missing.join('\n')}`).toEqual([]);
  });

  it('has no line longer than 300 characters', () => {
    const long = DOC.split('\n')
      .map((line, i) => ({ line: i + 1, length: line.length }))
      .filter((l) => l.length > 300);
    expect(long).toEqual([]);
  });
});
