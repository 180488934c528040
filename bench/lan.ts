// npm run bench:lan [-- --rates 10gbit,1gbit,100mbit --model 512,1024,512,10 --steps 8]
// Four experiments on LANs of network namespaces (deploy/lan/lan.sh, root), each scheme as its best
// implementation runs it and, beside it, the same run without overlap:
//  1. the MLP on 4 hosts at every rate: every scheme with --overlap on and off, and with --accumulate 4;
//  2. overlap is real: a GPT of 8 blocks whose gradient reduction lasts as long as its backward pass, DP and
//     ZeRO-1 with small buckets, on 4 hosts at 1 Gbit, overlap on and off in alternating rounds: how much of
//     the backward pass the buckets hide;
//  3. HSDP on 2 hosts x 2 ranks at every rate, beside DP and ZeRO-3: model states and the bytes that leave a host;
//  4. DP against torch DDP on the same LAN and against two estimates, serial and floor (bench/lan-ddp.ts).
// Writes the first experiment's reports as one HTML page (docs/lan-bench.html) and its step-time figure as an
// SVG (docs/lan-bench.svg), drawn by the report's own figures (shared/accounting/charts.ts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lanCleanup, lanJob } from './lan-run.js';
import { ddpOnLan } from './lan-ddp.js';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { isReplicated } from '../shared/training/schemes/table.js';
import type { Report, SchemeRow } from '../shared/accounting/report.js';
import { median } from '../shared/tensor/stats.js';
import { textTable } from '../shared/accounting/table.js';
import type { LabelledReport } from '../shared/accounting/charts.js';
import { renderFigureSvg, renderHtmlReport } from '../shared/accounting/html-report.js';

const argv = yargs(hideBin(process.argv))
  .option('rates', { type: 'string', default: '10gbit,1gbit,100mbit' })
  .option('model', { type: 'string', default: '512,1024,512,10' })
  .option('steps', { type: 'number', default: 8 })
  .option('experiments', { type: 'string', default: 'mlp,overlap,hsdp,ddp', describe: 'which of the four to run' })
  .option('gpt', { type: 'string', default: 'gpt:8,256,4,32', describe: "the overlap experiment's GPT" })
  .option('gpt-batch', {
    type: 'string',
    default: 'dp=32,zero1=20',
    describe:
      'its global batch per scheme, in sequences: a backward pass about as long as what the scheme can hide (DP its all-reduce, ZeRO-1 its reduce-scatter)',
  })
  .option('gpt-rate', { type: 'string', default: '1gbit' })
  .option('gpt-rounds', { type: 'number', default: 3, describe: 'overlap on and off, alternating, this many times' })
  .option('bucket-mib', {
    type: 'number',
    default: 2,
    describe: "the overlap experiment's bucket cap: each block's fp32 gradients (3 MiB) reach it alone, a bucket per block",
  })
  .option('ddp-rate', { type: 'string', default: '1gbit', describe: "the DDP experiment's link rate" })
  .option('ddp-steps', { type: 'number', default: 12 })
  .option('ddp-rounds', { type: 'number', default: 3, describe: 'zerowire DP and torch DDP, alternating, this many times' })
  .option('ddp-extra', { type: 'string', default: '', describe: 'more zerowire options for its DP runs, space-separated' })
  .option('svg', { type: 'string', default: fileURLToPath(new URL('../../docs/lan-bench.svg', import.meta.url)) })
  .option('html', { type: 'string', default: fileURLToPath(new URL('../../docs/lan-bench.html', import.meta.url)) })
  .strict()
  .parseSync();

/** One job on a fresh LAN; its report. `hosts` x `procs` ranks. */
const lan = (rate: string, options: string[], hosts = 4, procs = 1): Report => lanJob(rate, options, argv.steps, hosts, procs);

const ms = (x: number) => x.toFixed(1);
const kib = (b: number) => (b / 1024).toFixed(0);
const row = (r: Report, scheme: string) => r.rows.find((x) => x.scheme === scheme)!;
const passes = (t: SchemeRow['time']) => `${ms(t.forwardMs)}/${ms(t.backwardMs)}/${ms(t.optimizerMs)}`;

/** 1. Every scheme of the MLP at each rate: overlap on, off, and on with 4 micro-batches per step. */
function sweep(rates: string[]): { reports: LabelledReport[]; table: string } {
  const reports: LabelledReport[] = [];
  const rows: string[][] = [];
  const base = ['--scheme', 'dp,zero1,zero2,zero3', '--model', argv.model, '--batch', '64'];
  for (const rate of rates) {
    const on = lan(rate, base);
    const off = lan(rate, [...base, '--overlap', 'off']);
    const acc = lan(rate, [...base, '--accumulate', '4']);
    reports.push({ label: `MLP, ${rate} per link`, report: on });
    const dp = on.rows.find((r) => isReplicated(r.scheme))!;
    for (const x of on.rows) {
      const y = row(off, x.scheme);
      const k = row(acc, x.scheme);
      rows.push(
        [rate, x.title, ms(x.time.stepMs), ms(y.time.stepMs), passes(x.time), ms(x.time.exposedMs), ms(x.time.hiddenMs)].concat([
          (x.time.stepMs / dp.time.stepMs).toFixed(2),
          ms(k.time.stepMs),
          kib(x.sentPerStep.payload),
          kib(k.sentPerStep.payload),
        ]),
      );
    }
  }
  const head = [
    ['', '', 'step ms', '', 'overlap on', '', '', '', '--accumulate 4', 'KiB/rank/optimizer step', ''],
    ['link', 'scheme', 'overlap on', 'off', 'fwd/bwd/opt', 'exposed', 'hidden', 'step / DP', 'step ms', 'K=1', 'K=4'],
  ];
  const title = `4 hosts (network namespaces, tbf-shaped links), model ${argv.model}, global batch 64, ${argv.steps} steps, bf16 wire; mean per step`;
  return { reports, table: `${title}\n${textTable(head, rows)}` };
}

/** The overlap experiment's --gpt-batch as [scheme, batch] pairs, checked with --gpt-rounds before anything runs. */
function overlapBatches(): string[][] {
  const batches = argv['gpt-batch'].split(',').map((kv) => kv.split('='));
  const bad = batches.filter(([scheme, batch]) => !['dp', 'zero1'].includes(scheme) || !/^[1-9]\d*$/.test(batch ?? ''));
  if (bad.length) throw new Error(`--gpt-batch: ${bad.map((b) => b.join('=')).join(', ')} is not dp=N or zero1=N`);
  if (!(Number.isInteger(argv['gpt-rounds']) && argv['gpt-rounds'] >= 1)) throw new Error(`--gpt-rounds: ${argv['gpt-rounds']} is not a count of rounds`);
  return batches;
}

/** 2. DP and ZeRO-1 on a GPT whose gradient reduction lasts as long as its backward pass: what the buckets
 *  hide. fp32 gradients on the wire (what DDP reduces), compute on a worker thread (so the ring moves at any
 *  moment of the backward pass), overlap on and off in alternating rounds: the machine is shared. */
function overlapIsReal(batches: string[][]): string {
  const rows: string[][] = [];
  const shares = new Map<string, number[]>(); // saved / backward per round, by scheme
  for (const [scheme, batch] of batches) {
    const base = ['--scheme', scheme, '--model', argv.gpt, '--batch', batch, '--bucket-mib', String(argv['bucket-mib'])];
    const opts = [...base, '--wire-dtype', 'fp32', '--compute', 'thread'];
    for (let round = 1; round <= argv['gpt-rounds']; round++) {
      const [x, y] = [lan(argv['gpt-rate'], opts).rows[0], lan(argv['gpt-rate'], [...opts, '--overlap', 'off']).rows[0]];
      const saved = y.time.stepMs - x.time.stepMs;
      shares.set(x.title, [...(shares.get(x.title) ?? []), saved / y.time.backwardMs]);
      rows.push([
        x.title,
        batch,
        String(round),
        ms(y.time.stepMs),
        ms(x.time.stepMs),
        ms(saved),
        ms(y.time.backwardMs),
        ms(y.time.transferMs ?? NaN),
        `${ms(y.time.exposedMs)} -> ${ms(x.time.exposedMs)}`,
        `${((100 * saved) / y.time.backwardMs).toFixed(0)}%`,
      ]);
    }
  }
  const head = [['scheme', 'batch', 'round', 'step, overlap off', 'on', 'saved', 'backward (off)', 'transfer (off)', 'exposed off -> on', 'saved / backward']];
  const title = `Overlap is real: ${argv.gpt}, --bucket-mib ${argv['bucket-mib']}, fp32 wire, --compute thread, 4 hosts at ${argv['gpt-rate']}; mean ms per step`;
  const summary = [...shares].map(([scheme, xs]) => `${scheme} ${(100 * median(xs)).toFixed(0)}% (${xs.length} rounds)`).join(', ');
  return `${title}\n${textTable(head, rows)}\nmedian saved / backward: ${summary}`;
}

/** 3. HSDP on 2 hosts of 2 ranks, beside DP and ZeRO-3. */
function hybrid(rates: string[]): string {
  const rows: string[][] = [];
  for (const rate of rates) {
    const r = lan(rate, ['--scheme', 'dp,zero3,hsdp', '--model', argv.model, '--batch', '64'], 2, 2);
    for (const x of r.rows)
      rows.push([
        rate,
        x.title,
        ms(x.time.stepMs),
        x.resident.measured.toFixed(2),
        kib(x.sentPerStep.payload),
        kib(x.interHost.measured),
        kib(x.interHost.theory),
      ]);
  }
  const head = [['link', 'scheme', 'step ms', 'resident B/param', 'KiB/rank/step', 'leaves host', 'theory']];
  return `HSDP on 2 hosts x 2 ranks (shard group = a host), model ${argv.model}, global batch 64, bf16 wire\n${textTable(head, rows)}`;
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:lan needs root (network namespaces and tc): run it as root');
  const rates = argv.rates.split(',');
  const run = new Set(argv.experiments.split(','));
  const unknown = [...run].filter((e) => !['mlp', 'overlap', 'hsdp', 'ddp'].includes(e));
  if (unknown.length) throw new Error(`--experiments: ${unknown.join(', ')} is not one of mlp, overlap, hsdp, ddp`);
  const batches = overlapBatches();
  try {
    if (run.has('mlp')) {
      const mlp = sweep(rates);
      console.log(`${mlp.table}\n`);
      writeFileSync(argv.svg, await renderFigureSvg(mlp.reports, 'time'));
      writeFileSync(argv.html, await renderHtmlReport(mlp.reports, `zerowire on a 4-host LAN: ${rates.join(', ')} per link`));
      console.log(`chart: ${argv.svg}\nreport: ${argv.html}\n`);
    }
    if (run.has('overlap')) console.log(`${overlapIsReal(batches)}\n`);
    if (run.has('hsdp')) console.log(`${hybrid(rates)}\n`);
    if (run.has('ddp')) {
      const extra = argv['ddp-extra'].split(' ').filter(Boolean);
      console.log(ddpOnLan({ rate: argv['ddp-rate'], model: argv.model, batch: 64, steps: argv['ddp-steps'], rounds: argv['ddp-rounds'], hosts: 4, extra }));
    }
  } finally {
    lanCleanup();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:lan: ${(err as Error).message}`);
  process.exit(1);
});
