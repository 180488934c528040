// npm run bench:lateness [-- --runs 10 --only healthy-2x2,quota-2x1]   (root: deploy/lan/lan.sh)
// The late-host rule (shared/accounting/lateness.ts) on real runs of the namespace LAN at 1 Gbit: healthy
// runs beside a CPU burner (a busy loop on every core) must name nobody and be judged, not abstain; a host
// held to a fraction of a core must be named. Each case `--runs` times; prints each run's verdict and every
// host's lateness and bar, then a table per case (the one in docs/lan.md, "A late host: the rule").
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { lanCleanup, lanJob } from './lan-run.js';
import { textTable } from '../shared/accounting/table.js';

interface Case {
  name: string;
  hosts: number;
  procs: number;
  lan: string[]; // lan.sh's own options (a CPU quota)
  run: string[];
  burner: boolean;
  expect: string | null; // the host to name, or nobody
}

const MLP = ['--scheme', 'dp,zero3', '--model', '256,1024,1024,10', '--preflight', 'off'];
const CASES: Case[] = [
  { name: 'healthy-2x2', hosts: 2, procs: 2, lan: [], run: ['--scheme', 'dp', '--model', '64,512,512,10', '--preflight', 'off'], burner: true, expect: null },
  { name: 'healthy-4x1', hosts: 4, procs: 1, lan: [], run: MLP, burner: true, expect: null },
  // A quota starves a host only where its step needs more than the quota: at the default batch a faster machine's
  // rank needed less than 0.3 of a core, and the quota host was not short of CPU at all (2026-12-07: its compute
  // and loop no longer than the other's in 6 runs). --batch 2048 makes the compute outweigh it, as for 4 x 1.
  { name: 'quota-2x1', hosts: 2, procs: 1, lan: ['--cpu-host', '1=0.3'], run: [...MLP, '--batch', '2048'], burner: false, expect: '10.250.0.3' },
  { name: 'quota-4x1', hosts: 4, procs: 1, lan: ['--cpu-host', '1=0.3'], run: [...MLP, '--batch', '2048'], burner: false, expect: '10.250.0.3' },
];

const argv = yargs(hideBin(process.argv))
  .option('runs', { type: 'number', default: 10 })
  .option('steps', { type: 'number', default: 8, describe: 'optimizer steps per scheme (the first is not counted)' })
  .option('only', { type: 'string', describe: 'comma-separated case names' })
  .strict()
  .parseSync();

/** A busy loop on every core, for the healthy cases: the machine as loaded as a CI run leaves it. */
function burn(): ChildProcess[] {
  return cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

const wanted = argv.only ? new Set(argv.only.split(',')) : null;
const rows: string[][] = [];
try {
  for (const c of CASES.filter((x) => !wanted || wanted.has(x.name))) {
    const verdicts = { right: 0, named: new Map<string, number>(), abstained: 0 };
    const seen: number[] = [];
    for (let i = 0; i < argv.runs; i++) {
      const burners = c.burner ? burn() : [];
      try {
        const report = lanJob('1gbit', c.run, argv.steps, c.hosts, c.procs, c.lan);
        const n = report.network;
        const named = /^host (\S+)'s ranks entered collectives/.exec(n.blame.find((b) => b.startsWith('host ')) ?? '')?.[1] ?? null;
        const abstained = n.blame.some((b) => b.includes('too few steps'));
        if (abstained) verdicts.abstained++;
        if (named) verdicts.named.set(named, (verdicts.named.get(named) ?? 0) + 1);
        if (!abstained && named === c.expect) verdicts.right++;
        const figures = n.lateness.map((h) => `${h.host} ${h.ms.toFixed(1)}/${h.bar.toFixed(1)} (${h.lateSteps}/${h.steps})`).join(', ');
        seen.push(...n.lateness.filter((h) => h.host !== c.expect).map((h) => h.ms));
        console.log(`${c.name} run ${i + 1}: ${n.blame.join('; ')}\n  ms late/bar (late steps): ${figures}`);
      } finally {
        for (const b of burners) b.kill('SIGKILL');
      }
    }
    const named = [...verdicts.named].map(([h, k]) => `${h} ${k}`).join(', ') || 'nobody';
    rows.push([
      c.name,
      `${c.hosts} x ${c.procs}`,
      [...c.lan, ...c.run.slice(0, 4)].join(' '),
      c.burner ? 'busy loop on every core' : 'idle',
      c.expect ?? 'nobody',
      `${verdicts.right} of ${argv.runs}`,
      named,
      String(verdicts.abstained),
      seen.length ? `${Math.max(...seen).toFixed(1)}` : '-',
    ]);
  }
} finally {
  lanCleanup();
}
console.log(textTable([['case', 'hosts', 'options', 'load', 'should name', 'right', 'named', 'abstained', 'others at most (ms)']], rows));
