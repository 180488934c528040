// npm run bench:lan [-- --rates 10gbit,1gbit,100mbit --model 256,1024,1024,10 --steps 8 --prefetch 0]
// Runs every scheme on a 4-host LAN of network namespaces (deploy/lan/lan.sh, root) at each link rate and
// prints step time split into compute, exposed and hidden communication, with ZeRO-3/DP per rate. Writes
// the same as an SVG chart (docs/lan-bench.svg by default).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { Report } from '../shared/accounting/report.js';
import { textTable } from '../shared/accounting/table.js';

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
  .option('svg', { type: 'string', default: fileURLToPath(new URL('../../docs/lan-bench.svg', import.meta.url)) })
  .strict()
  .parseSync();

const LAN = fileURLToPath(new URL('../../deploy/lan/lan.sh', import.meta.url));

interface Point {
  rate: string;
  scheme: string;
  step: number;
  compute: number;
  exposed: number;
  hidden: number;
}

function run(rate: string, out: string, options: string[] = ['--scheme', 'all', '--model', argv.model, '--prefetch', String(argv.prefetch)]): Report {
  const args = [LAN, '--hosts', String(argv.hosts), '--rate', rate, '--', ...options, '--steps', String(argv.steps), '--out', out, '--log-level', 'warn'];
  // A saturated slow link with tail-drop tbf (this kernel has no fq_codel) can delay the sparse control flow
  // by TCP retransmission timeouts: give heartbeats more slack than the 1.2 s default here.
  const env = { ...process.env, NODE: process.execPath, ZEROWIRE_HEARTBEAT_TIMEOUT: process.env.ZEROWIRE_HEARTBEAT_TIMEOUT ?? '6' };
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

function svg(points: Point[], rates: string[]): string {
  const schemes = ['dp', 'zero1', 'zero2', 'zero3'];
  const W = 760;
  const H = 360;
  const left = 60;
  const bottom = 300;
  const max = Math.max(...points.map((p) => p.compute + p.exposed)) * 1.1;
  const groupW = (W - left - 20) / rates.length;
  const barW = groupW / (schemes.length + 1);
  const y = (v: number) => bottom - (v / max) * (bottom - 40);
  const parts: string[] = [];
  rates.forEach((rate, g) => {
    schemes.forEach((s, i) => {
      const p = points.find((q) => q.rate === rate && q.scheme === s);
      if (!p) return;
      const x = left + g * groupW + (i + 0.5) * barW;
      parts.push(`<rect x="${x}" y="${y(p.compute)}" width="${barW * 0.9}" height="${bottom - y(p.compute)}" fill="#4e79a7"/>`);
      parts.push(`<rect x="${x}" y="${y(p.compute + p.exposed)}" width="${barW * 0.9}" height="${y(p.compute) - y(p.compute + p.exposed)}" fill="#e15759"/>`);
      parts.push(`<text x="${x + barW * 0.45}" y="${bottom + 14}" font-size="10" text-anchor="middle">${s.replace('zero', 'Z')}</text>`);
    });
    parts.push(`<text x="${left + g * groupW + groupW / 2}" y="${bottom + 32}" font-size="12" text-anchor="middle">${rate} per link</text>`);
  });
  for (let k = 0; k <= 4; k++) {
    const v = (max / 4) * k;
    parts.push(
      `<text x="${left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${v.toFixed(0)}</text><line x1="${left}" x2="${W - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="${W / 2}" y="20" font-size="14" text-anchor="middle">Step time per scheme on a ${argv.hosts}-host LAN (ms): compute (blue) + exposed communication (red)</text>
${parts.join('\n')}
<text x="14" y="${bottom / 2}" font-size="11" transform="rotate(-90 14 ${bottom / 2})" text-anchor="middle">ms per step</text>
</svg>
`;
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

function main(): void {
  if (process.getuid?.() !== 0) throw new Error('bench:lan needs root (network namespaces and tc): run it as root');
  const rates = argv.rates.split(',');
  const dir = mkdtempSync(join(tmpdir(), 'zerowire-bench-lan-'));
  const points: Point[] = [];
  try {
    for (const rate of rates) {
      const report = run(rate, join(dir, `${rate}.json`));
      for (const r of report.rows)
        points.push({ rate, scheme: r.title, step: r.time.stepMs, compute: r.time.computeMs, exposed: r.time.exposedMs, hidden: r.time.overlappedMs });
      process.stderr.write(`${rate}: done\n`);
    }
    prefetchComparison(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = points.map((p) => {
    const dp = points.find((q) => q.rate === p.rate && q.scheme === 'DP')!;
    return [p.rate, p.scheme, p.step.toFixed(1), p.compute.toFixed(1), p.exposed.toFixed(1), p.hidden.toFixed(1), (p.step / dp.step).toFixed(2)];
  });
  console.log(
    `${argv.hosts} hosts (network namespaces, tbf-shaped links), model ${argv.model}, ${argv.steps} steps, bf16 wire, ZeRO-3 prefetch ${argv.prefetch}; mean ms per step`,
  );
  console.log(textTable([['link', 'scheme', 'step', 'compute', 'exposed comm', 'overlap', 'step / DP']], rows));
  console.log(`\n${prefetchTable}`);
  writeFileSync(
    argv.svg,
    svg(
      points.map((p) => ({ ...p, scheme: p.scheme.toLowerCase().replace('-', '') })),
      rates,
    ),
  );
  console.log(`chart: ${argv.svg}`);
}

try {
  main();
} catch (err) {
  console.error(`bench:lan: ${(err as Error).message}`);
  process.exit(1);
}
