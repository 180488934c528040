// The simulator at scale: a 7B Llama on 1,024 ranks (128 hosts × 8 H100s, 4 × 200 Gbit NICs each) with every
// scheme, and on 4,096 ranks with ZeRO-3, each in a process of its own; what each took (wall time, the virtual
// clock's events, peak heap and resident memory) and the bars it is held to (1,024 ranks: 60 s and 2 GB).
// `npm run bench:simulate`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { textTable } from '../shared/accounting/table.js';
import type { Report } from '../shared/accounting/report.js';

const CLI = fileURLToPath(new URL('../cli/zerowire.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'zw-bench-sim-'));

interface Case {
  ranks: number;
  schemes: string;
  bar: { seconds: number; gb: number } | null;
}

const CASES: Case[] = [
  { ranks: 1024, schemes: 'all', bar: { seconds: 60, gb: 2 } },
  { ranks: 4096, schemes: 'zero3', bar: null },
];

const rows: string[][] = [];
for (const c of CASES) {
  const out = join(dir, `${c.ranks}.json`);
  const args = ['simulate', '--compute', 'model:h100', '--model', 'llama2-7b', '--world', String(c.ranks), '--hosts', String(c.ranks / 8)];
  args.push('--nics', '4', '--nic-gbit', '200', '--steps', '2', '--batch', String(c.ranks), '--scheme', c.schemes, '--out', out, '--log-level', 'warn');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`simulate ${c.ranks} ranks failed (${r.status}): ${r.stderr}`);
  const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
  const s = report.simulated!;
  const ok = c.bar ? (s.wallMs / 1000 <= c.bar.seconds && s.rssMB / 1000 <= c.bar.gb ? 'yes' : 'NO') : '-';
  rows.push([
    String(c.ranks),
    report.rows.map((x) => x.title).join(', '),
    (s.wallMs / 1000).toFixed(1),
    wall.toFixed(1),
    String(s.events),
    s.heapMB.toFixed(0),
    s.rssMB.toFixed(0),
    c.bar ? `${c.bar.seconds} s, ${c.bar.gb} GB` : '-',
    ok,
  ]);
}
process.stdout.write(
  `${textTable([['ranks', 'schemes', 'simulation s', 'process s', 'clock events', 'heap MB', 'resident MB', 'bar', 'met']], rows)}\n` +
    'llama2-7b, 2 steps, batch 1 per rank, hosts of 8 H100s with 4 × 200 Gbit NICs; simulation s: the simulation itself, process s: with start-up and the report\n',
);
