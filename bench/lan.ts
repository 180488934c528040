// npm run bench:lan [-- --rates 10gbit,1gbit,100mbit --model 256,1024,1024,10 --gpt gpt:4,128,4,64 --steps 8 --prefetch 0]
// Runs every scheme of the MLP and of a GPT on a 4-host LAN of network namespaces (deploy/lan/lan.sh, root) at each link rate and
// prints step time split into compute, exposed and hidden communication, with ZeRO-3/DP per rate. Writes
// the reports of every rate side by side as one HTML page (docs/lan-bench.html) and the step-time figure
// as an SVG (docs/lan-bench.svg), both drawn by the report's own figures (shared/accounting/charts.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { isReplicated } from '../shared/training/schemes/table.js';
import type { Report } from '../shared/accounting/report.js';
import { textTable } from '../shared/accounting/table.js';
import type { LabelledReport } from '../shared/accounting/charts.js';
import { renderFigureSvg, renderHtmlReport } from '../shared/accounting/html-report.js';

const argv = yargs(hideBin(process.argv))
  .option('rates', { type: 'string', default: '10gbit,1gbit,100mbit' })
  .option('hosts', { type: 'number', default: 4 })
  .option('model', { type: 'string', default: '256,1024,1024,10' })
  .option('steps', { type: 'number', default: 8 })
  .option('prefetch', { type: 'number', default: 0 })
  .option('prefetch-rate', { type: 'string', default: '100mbit', describe: 'link rate of the ZeRO-3 prefetch comparison' })
  .option('prefetch-model', {
    type: 'string',
    default: '512,512,512,512,512,512,10',
    describe: 'equal-sized units, so each gather can hide behind the previous unit',
  })
  .option('prefetch-batch', { type: 'number', default: 256 })
  .option('gpt', { type: 'string', default: 'gpt:4,128,4,64', describe: "a GPT configuration run at every rate too ('' for none)" })
  .option('gpt-batch', { type: 'number', default: 16, describe: 'its global batch, in sequences' })
  .option('svg', { type: 'string', default: fileURLToPath(new URL('../../docs/lan-bench.svg', import.meta.url)) })
  .option('html', { type: 'string', default: fileURLToPath(new URL('../../docs/lan-bench.html', import.meta.url)) })
  .strict()
  .parseSync();

const LAN = fileURLToPath(new URL('../../deploy/lan/lan.sh', import.meta.url));

function run(rate: string, out: string, options: string[] = ['--scheme', 'all', '--model', argv.model, '--prefetch', String(argv.prefetch)]): Report {
  const args = [LAN, '--hosts', String(argv.hosts), '--rate', rate, '--', ...options, '--steps', String(argv.steps), '--out', out, '--log-level', 'warn'];
  const env = { ...process.env, NODE: process.execPath };
  const r = spawnSync('bash', args, { stdio: ['ignore', 'ignore', 'pipe'], env, encoding: 'utf8' });
  if (r.status !== 0)
    process.stderr.write(
      r.stderr
        .split('\n')
        .filter((l) => /"level":50|lan\.sh/.test(l))
        .join('\n'),
    );
  if (r.status !== 0) throw new Error(`lan.sh at ${rate} exited with ${r.status}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Report;
}

/** ZeRO-3 at one rate: inline compute, then compute on a thread with prefetch depth 0, 1, 2. */
function prefetchComparison(dir: string): void {
  const configs = [
    ['inline', 0],
    ['thread', 0],
    ['thread', 1],
    ['thread', 2],
  ] as const;
  const rows: string[][] = [];
  let base = 0;
  for (const [compute, depth] of configs) {
    const opts = [
      '--scheme',
      'zero3',
      '--model',
      argv['prefetch-model'],
      '--batch',
      String(argv['prefetch-batch']),
      '--compute',
      compute,
      '--prefetch',
      String(depth),
    ];
    const r = run(argv['prefetch-rate'], join(dir, `prefetch-${compute}-${depth}.json`), opts).rows[0];
    if (compute === 'thread' && depth === 0) base = r.time.exposedMs;
    const hidden = compute === 'thread' && depth > 0 && base > 0 ? `${(100 * (1 - r.time.exposedMs / base)).toFixed(0)}%` : '-';
    rows.push([compute, String(depth), r.time.stepMs.toFixed(1), r.time.computeMs.toFixed(1), r.time.exposedMs.toFixed(1), hidden, r.peak.measured.toFixed(2)]);
  }
  prefetchTable = `ZeRO-3 prefetch at ${argv['prefetch-rate']}, model ${argv['prefetch-model']}, global batch ${argv['prefetch-batch']}; mean ms per step
${textTable([['compute', 'prefetch', 'step', 'compute', 'exposed comm', 'hidden vs depth 0', 'peak B/param']], rows)}`;
}

let prefetchTable = '';

/** Every scheme of one model at each rate: the reports, and their table. */
function sweep(dir: string, rates: string[], model: string, batch: number): { reports: LabelledReport[]; table: string } {
  const reports: LabelledReport[] = [];
  const rows: string[][] = [];
  const ms = (x: number | null) => (x === null ? '-' : x.toFixed(1));
  for (const rate of rates) {
    const options = ['--scheme', 'all', '--model', model, '--batch', String(batch), '--prefetch', String(argv.prefetch)];
    const report = run(rate, join(dir, `${model.replace(/[:,]/g, '_')}-${rate}.json`), options);
    reports.push({ label: `${model.startsWith('gpt:') ? 'GPT' : 'MLP'}, ${rate} per link`, report });
    const dp = report.rows.find((r) => isReplicated(r.scheme))!;
    for (const r of report.rows) {
      const t = r.time;
      rows.push([
        rate,
        r.title,
        t.stepMs.toFixed(1),
        t.computeMs.toFixed(1),
        t.exposedMs.toFixed(1),
        ms(t.waitMs),
        ms(t.transferMs),
        t.hiddenMs.toFixed(1),
        (t.stepMs / dp.time.stepMs).toFixed(2),
      ]);
    }
    process.stderr.write(`${model} at ${rate}: done\n`);
  }
  const table = `${argv.hosts} hosts (network namespaces, tbf-shaped links), model ${model}, global batch ${batch}, ${argv.steps} steps, bf16 wire, ZeRO-3 prefetch ${argv.prefetch}; mean ms per step
${textTable([['link', 'scheme', 'step', 'compute', 'exposed comm', 'wait', 'transfer', 'overlap', 'step / DP']], rows)}`;
  return { reports, table };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:lan needs root (network namespaces and tc): run it as root');
  const rates = argv.rates.split(',');
  const dir = mkdtempSync(join(tmpdir(), 'zerowire-bench-lan-'));
  let mlp: ReturnType<typeof sweep>;
  let gpt: ReturnType<typeof sweep> | null = null;
  try {
    mlp = sweep(dir, rates, argv.model, 64);
    if (argv.gpt) gpt = sweep(dir, rates, argv.gpt, argv['gpt-batch']);
    prefetchComparison(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(mlp.table);
  if (gpt) console.log(`\n${gpt.table}`);
  console.log(`\n${prefetchTable}`);
  const reports = [...mlp.reports, ...(gpt?.reports ?? [])];
  writeFileSync(argv.svg, await renderFigureSvg(mlp.reports, 'time'));
  if (gpt) writeFileSync(argv.svg.replace(/\.svg$/, '-gpt.svg'), await renderFigureSvg(gpt.reports, 'time'));
  writeFileSync(argv.html, await renderHtmlReport(reports, `zerowire on a ${argv.hosts}-host LAN: ${rates.join(', ')} per link`));
  console.log(`charts: ${argv.svg}${gpt ? ` and ${argv.svg.replace(/\.svg$/, '-gpt.svg')}` : ''}\nreport: ${argv.html}`);
}

main().catch((err: unknown) => {
  console.error(`bench:lan: ${(err as Error).message}`);
  process.exit(1);
});
