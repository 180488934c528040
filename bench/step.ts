// npm run bench:step [-- --world 2 --model 512,1024,512,10 --batch 64 --steps 20 --rounds 3]
// A training step end to end, side by side: zerowire DP and ZeRO-3 (`zerowire local`, fp32 on the wire,
// as PyTorch's DDP sends fp32) against torch.distributed DDP (gloo, CPU, one thread per rank) on the same
// model, global batch and steps, in alternating rounds. Prints the median step time of each (per step the
// slowest rank, first step excluded) and the ratios.
import { describePeer, torchPeer } from './torch-peer.js';
import { KernelArena } from '../shared/tensor/kernel-arena.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { Report } from '../shared/accounting/report.js';
import { textTable } from '../shared/accounting/table.js';

const argv = yargs(hideBin(process.argv))
  .option('world', { type: 'number', default: 2 })
  .option('model', { type: 'string', default: '512,1024,512,10' })
  .option('batch', { type: 'number', default: 64, describe: 'global batch' })
  .option('steps', { type: 'number', default: 20 })
  .option('rounds', { type: 'number', default: 3, describe: 'alternating zerowire / DDP rounds' })
  .strict()
  .parseSync();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const CLI = fileURLToPath(new URL('../cli/zerowire.js', import.meta.url));
const DDP = fileURLToPath(new URL('../../bench/torch_ddp.py', import.meta.url));

/** Per scheme, the slowest rank's time of every step but the first. */
function zerowire(): Record<string, number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'zerowire-step-'));
  try {
    const out = join(dir, 'report.json');
    const args = [
      'local',
      '--world',
      String(argv.world),
      '--scheme',
      'dp,zero3',
      '--model',
      argv.model,
      '--batch',
      String(argv.batch),
      '--steps',
      String(argv.steps),
      '--wire-dtype',
      'fp32',
      '--out',
      out,
      '--log-level',
      'warn',
    ];
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 600_000 });
    if (r.status !== 0) throw new Error(`zerowire local failed: ${r.stderr.slice(-500)}`);
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
    const steps: Record<string, number[]> = {};
    for (const [scheme, ranks] of Object.entries(report.perRank))
      steps[scheme] = ranks[0].steps.slice(1).map((_, i) => Math.max(...ranks.map((rk) => rk.steps[i + 1].stepMs)));
    return steps;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Each DDP rank, like each of ours, computes on one thread.
const peer = torchPeer(1);

function ddp(): number[] | null {
  if (!peer || peer.refused) return null;
  const r = spawnSync('/usr/bin/python3', [DDP, String(argv.world), argv.model, String(argv.batch), String(argv.steps)], {
    encoding: 'utf8',
    timeout: 600_000,
    env: peer.env,
  });
  if (r.status !== 0) return null;
  return (JSON.parse(r.stdout.trim().split('\n').pop()!) as { step_ms: number[] }).step_ms.slice(1);
}

const rows: { dp: number; zero3: number; ddp: number | null }[] = [];
for (let i = 0; i < argv.rounds; i++) {
  const z = zerowire();
  const d = ddp();
  rows.push({ dp: median(z.dp), zero3: median(z.zero3), ddp: d ? median(d) : null });
}
const haveDdp = rows.every((r) => r.ddp !== null);
console.log(
  `one training step, ${argv.world} ranks on loopback, model ${argv.model}, global batch ${argv.batch}, ${argv.steps} steps, fp32 gradients on the wire; products on ${new KernelArena().backend}; median ms per step (slowest rank, first step excluded)`,
);
console.log(describePeer(peer, 1));
const head = [['round', 'zerowire DP', 'zerowire ZeRO-3', ...(haveDdp ? ['torch DDP', 'DP / DDP', 'ZeRO-3 / DDP'] : [])]];
const body = rows.map((r, i) => [
  String(i + 1),
  r.dp.toFixed(1),
  r.zero3.toFixed(1),
  ...(haveDdp ? [r.ddp!.toFixed(1), (r.dp / r.ddp!).toFixed(2), (r.zero3 / r.ddp!).toFixed(2)] : []),
]);
if (haveDdp) {
  const m = (f: (r: (typeof rows)[number]) => number) => median(rows.map(f));
  body.push([
    'median',
    m((r) => r.dp).toFixed(1),
    m((r) => r.zero3).toFixed(1),
    m((r) => r.ddp!).toFixed(1),
    m((r) => r.dp / r.ddp!).toFixed(2),
    m((r) => r.zero3 / r.ddp!).toFixed(2),
  ]);
}
console.log(textTable(head, body));
