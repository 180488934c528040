// The import picture of docs/architecture.md, checked: no cycles between files, arrows between rooms point
// down only, and shared/ never imports coordinator/, rank/, cli/ or bench/.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CODE = ['shared', 'coordinator', 'rank', 'simulator', 'cli', 'bench'];
/** Rooms of shared/, bottom first: a room may import its own files and rooms below it. */
const ROOMS = ['time', 'tensor', 'control', 'transport', 'collectives', 'training', 'whatif', 'models', ['io', 'accounting'], 'predict'] as const;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** file (relative to the repo) -> the repo files it imports (type-only imports included: they are arrows too). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of CODE.flatMap((d) => tsFiles(join(ROOT, d)))) {
    const src = readFileSync(file, 'utf8');
    const deps = [...src.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)\.js'/g)].map((m) => relative(ROOT, resolve(dirname(file), `${m[1]}.ts`)));
    graph.set(relative(ROOT, file), deps);
  }
  return graph;
}

function level(file: string): number | null {
  const m = /^shared\/([^/]+)\//.exec(file);
  if (!m) return null;
  const at = ROOMS.findIndex((r) => (typeof r === 'string' ? r === m[1] : (r as readonly string[]).includes(m[1])));
  if (at < 0) throw new Error(`${file} is in no known room of shared/`);
  return at;
}

describe('architecture', () => {
  const graph = importGraph();

  it('every shared/ file sits in a room', () => {
    for (const file of graph.keys()) if (file.startsWith('shared/')) expect(level(file), file).not.toBeNull();
  });

  it('shared/ imports only shared/, and rooms import only their own files and rooms below them', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const from = level(file);
      if (from === null) continue;
      for (const d of deps) {
        const to = level(d);
        const sameRoom = file.split('/')[1] === d.split('/')[1];
        if (to === null || (!sameRoom && to >= from)) wrong.push(`${file} -> ${d}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no import cycle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') return void cycles.push([...path.slice(path.indexOf(f)), f].join(' -> '));
      state.set(f, 'open');
      for (const d of graph.get(f) ?? []) visit(d, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of graph.keys()) visit(f, []);
    expect(cycles).toEqual([]);
  });
});
