// End to end through the CLI: `zerowire local` runs a coordinator and 4 rank processes.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../shared/accounting/report.js';
import { adamUpdate } from '../../shared/training/adam.js';
import { Mlp, MlpSpec } from '../../shared/models/mlp/mlp.js';
import { GptSpec } from '../../shared/models/gpt/spec.js';
import { parseSafetensors } from '../../shared/io/safetensors.js';
import { fromStateDict } from '../../shared/io/state-dict.js';
import { alive, eventually, logLines, runCli, type CliResult } from '../helpers/cli.js';
import { maxAbsDiff } from '../helpers/train.js';

const dir = mkdtempSync(join(tmpdir(), 'zerowire-local-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODEL = '24,61,33,7'; // 1525 + 2046 + 238 parameters: none divisible by 4

/** The dump lets anyone re-train independently: plain full-batch Adam over the dumped data and order must
 *  give each step's loss and every scheme's final weights. */
function replayDump(dump: string, steps: number, batch: number, losses: number[], schemes: string[]): void {
  const spec = new MlpSpec(MODEL.split(',').map(Number));
  const theta = fromStateDict(spec, parseSafetensors(readFileSync(join(dump, 'initial.safetensors'))));
  const data = parseSafetensors(readFileSync(join(dump, 'data.safetensors')));
  const x = data.get('x')!.data as Float32Array;
  const y = Int32Array.from(data.get('y')!.data as BigInt64Array, Number);
  const order = data.get('batch_rows')!;
  expect(order.shape).toEqual([steps, batch]);
  const mlp = new Mlp(spec);
  const m = new Float32Array(spec.params);
  const v = new Float32Array(spec.params);
  for (let t = 0; t < steps; t++) {
    const rows = (order.data as Int32Array).subarray(t * batch, (t + 1) * batch);
    const bx = new Float32Array(batch * spec.inputs);
    const by = new Int32Array(batch);
    rows.forEach((row, i) => {
      bx.set(x.subarray(row * spec.inputs, (row + 1) * spec.inputs), i * spec.inputs);
      by[i] = y[row];
    });
    const g = new Float32Array(spec.params);
    const loss = mlp.lossAndGradient(theta, bx, batch, by, g);
    expect(Math.abs(loss - losses[t])).toBeLessThanOrEqual(1e-5);
    adamUpdate(theta, m, v, g, t + 1, { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8 });
  }
  for (const s of schemes) {
    const final = fromStateDict(spec, parseSafetensors(readFileSync(join(dump, `final-${s}.safetensors`))));
    expect(maxAbsDiff(final, theta), s).toBeLessThanOrEqual(1e-5);
  }
}

/** `zerowire local` on MODEL over 4 ranks, global batch 16, fp32 on the wire (exact against the replay), with
 *  `args`; it must succeed with no error logged. Its output, its JSON report and its dump folder. */
async function runSmall(name: string, args: string[]): Promise<{ r: CliResult; report: Report; dump: string }> {
  const out = join(dir, `${name}.json`);
  const dump = join(dir, `dump-${name}`);
  const common = ['local', '--world', '4', '--model', MODEL, '--batch', '16', '--samples', '96', '--lr', '0.01', '--wire-dtype', 'fp32'];
  const r = await runCli([...common, ...args, '--out', out, '--dump', dump]);
  expect(r.stderr).not.toMatch(/"level":50/);
  expect(r.code).toBe(0);
  return { r, report: JSON.parse(readFileSync(out, 'utf8')) as Report, dump };
}

describe('zerowire local --world 4 --scheme all', () => {
  it('runs every scheme in separate processes and reports wire and memory cost that match theory', async () => {
    const { r, report, dump } = await runSmall('all', ['--scheme', 'all', '--steps', '6']);
    expect(r.stdout).toMatch(/ZeRO-3/);
    expect(r.stdout).toMatch(/losses agree across schemes: yes/);

    // Every rank joined once, each a separate process, none of them this one.
    expect(report.ranks.map((x) => x.rank)).toEqual([0, 1, 2, 3]);
    const pids = report.ranks.map((x) => x.pid);
    expect(new Set(pids).size).toBe(4);
    expect(pids).not.toContain(process.pid);
    expect(await eventually(() => pids.every((p) => !alive(p)))).toBe(true);

    const row = (s: string) => report.rows.find((x) => x.scheme === s)!;
    expect(report.rows.map((x) => x.scheme)).toEqual(['dp', 'zero1', 'zero2', 'zero3']);
    // ZeRO-3 sends 1.5x DP's payload, to within padding (here exact: every unit is padded the same way).
    expect(row('zero3').sentPerStep.payload / row('dp').sentPerStep.payload).toBeCloseTo(1.5, 6);
    for (const x of report.rows) {
      expect(x.sentPerStep.payload).toBe(x.sentPerStep.theory);
      expect(x.sentPerStep.frame).toBeGreaterThan(x.sentPerStep.payload);
      expect(x.resident.measured).toBe(x.resident.theory);
      expect(x.peak.measured).toBe(x.peak.theory);
    }
    expect(row('zero3').peak.measured).toBeGreaterThan(row('zero3').resident.measured);
    expect(report.agreement?.agree).toBe(true);
    expect(report.agreement?.maxLossDiff).toBeLessThanOrEqual(1e-5);
    expect(report.perRank.zero3).toHaveLength(4);

    replayDump(dump, 6, 16, row('dp').losses, ['dp', 'zero1', 'zero2', 'zero3']);
  });

  it('--accumulate 4: four micro-batches of one row per rank; bytes per optimizer step as theory; the same weights as full-batch Adam', async () => {
    const { r, report, dump } = await runSmall('accumulate', ['--scheme', 'all', '--steps', '4', '--accumulate', '4']);
    expect(r.stdout).toMatch(/--accumulate 4: every figure per step is per optimizer step of 4 micro-batches of 1 rows per rank/);
    const row = (s: string) => report.rows.find((x) => x.scheme === s)!;
    for (const x of report.rows) {
      expect(x.sentPerStep.payload).toBe(x.sentPerStep.theory);
      expect(x.resident.measured).toBe(x.resident.theory);
    }
    // DP and ZeRO-1 reduce once per optimizer step, ZeRO-2 every micro-batch (4 + the parameters' gather),
    // ZeRO-3 gathers twice and reduce-scatters every micro-batch: 2 : 2 : 5 : 12 passes.
    const dp = row('dp').sentPerStep.payload;
    expect([row('zero1'), row('zero2'), row('zero3')].map((x) => x.sentPerStep.payload / dp)).toEqual([1, 2.5, 6]);
    // The fp32 accumulator: whole for DP and ZeRO-1 (+4 B/param: fp32 wire, so 4 + 4 + 12 + 4), the owned
    // shard for ZeRO-2/3.
    expect(row('dp').resident.theory).toBeCloseTo(24 * (report.rows[0].paddedParams / report.rows[0].params), 9);
    expect(report.agreement?.agree).toBe(true);
    replayDump(dump, 4, 16, row('dp').losses, ['dp', 'zero1', 'zero2', 'zero3']);
  });
  it('--scheme hsdp --shard-group 2: two groups of two, weights as DP and full-batch Adam, 16/G bytes per parameter, group and cross bytes as theory', async () => {
    const { report, dump } = await runSmall('hsdp', ['--scheme', 'dp,hsdp', '--shard-group', '2', '--steps', '6']);
    const [dp, hsdp] = report.rows;
    expect(hsdp.title).toBe('HSDP');
    expect(report.agreement?.maxLossDiff).toBeLessThanOrEqual(1e-5);
    expect(hsdp.maxParamDiff).toBeLessThanOrEqual(1e-5);
    // fp32 wire: 4 + 4 + 12 bytes per parameter, sharded over the group of 2.
    expect(hsdp.resident.measured).toBe(hsdp.resident.theory);
    expect(hsdp.resident.theory * hsdp.params).toBe((20 * hsdp.paddedParams) / 2);
    expect(dp.resident.theory / hsdp.resident.theory).toBeCloseTo(2, 2);
    // Group ring 3(G-1)/G of the group-padded model, cross ring 2(M-1)/M of one shard: each of the three
    // units' shards (763, 1023 and 119 elements) padded to a multiple of M = 2 by its all-reduce.
    expect(hsdp.sentPerStep.payload).toBe(hsdp.sentPerStep.theory);
    expect(hsdp.sentPerStep.theory).toBe((3 * (1 / 2) * hsdp.paddedParams + 2 * (1 / 2) * (764 + 1024 + 120)) * 4);
    replayDump(dump, 6, 16, dp.losses, ['dp', 'hsdp']);
  });

  it('ZEROWIRE_BLAS=off (or --blas off) reaches the ranks: their products run on the kernels, and the report says so', async () => {
    const args = ['local', '--world', '2', '--scheme', 'dp', '--model', MODEL, '--steps', '2', '--batch', '8', '--samples', '32'];
    for (const [extra, env] of [
      [[], { ZEROWIRE_BLAS: 'off' }],
      [['--blas', 'off'], {}],
    ] as const) {
      const r = await runCli([...args, ...extra], 60_000, env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/products computed on: WebAssembly SIMD kernels \(no optimized BLAS: ZEROWIRE_BLAS=off\) \(every rank\)/);
    }
  });

  it('bf16 on the wire: ZeRO-3/DP payload ratio 1.5, half the fp32 bytes', async () => {
    const out = join(dir, 'bf16.json');
    const r = await runCli([
      'local',
      '--world',
      '4',
      '--scheme',
      'dp,zero3',
      '--model',
      MODEL,
      '--steps',
      '3',
      '--batch',
      '16',
      '--samples',
      '64',
      '--out',
      out,
    ]);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
    const [dp, z3] = report.rows;
    expect(z3.sentPerStep.payload / dp.sentPerStep.payload).toBeCloseTo(1.5, 6);
    expect(dp.sentPerStep.payload).toBe((2 * 3 * report.rows[0].paddedParams * 2) / 4);
  });
});

describe('a model of 16.8M parameters on 4 ranks, at the default heartbeat limit', () => {
  // Before: DP's first optimizer step mapped 200 MB of fresh optimizer state in one synchronous stretch
  // (1.6 s here), and each rank sent its 67 MB of weights as one message; the coordinator called a busy rank
  // dead ("stopped answering heartbeats", 2 runs of 2). Now the heap and the arena are mapped in slices
  // before they are used and the weights go in 4 MiB pieces, DP's from rank 0 only.
  it('runs DP and ZeRO-3 to the end, their weights put together from pieces agreeing', async () => {
    const out = join(dir, 'large.json');
    const args = ['local', '--world', '4', '--model', '4096,4096,10', '--scheme', 'dp,zero3', '--steps', '2', '--wire-dtype', 'fp32', '--samples', '256'];
    const r = await runCli([...args, '--out', out], 120_000);
    expect(r.stderr).not.toMatch(/heartbeats/);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
    const [dp, z3] = report.rows;
    expect([dp.params, z3.params]).toEqual([16822282, 16822282]); // 4096*4096 + 4096 + 4096*10 + 10
    expect(report.agreement?.maxParamDiff).toBeLessThan(1e-5); // ZeRO-3's 4 shards against DP's copy, 17 pieces each way
    const sent = (scheme: string) => report.perRank[scheme].map((x) => x.weightBytes);
    expect(sent('dp')).toEqual([4 * dp.paddedParams, 0, 0, 0]);
    expect(sent('zero3')).toEqual(Array(4).fill(z3.paddedParams));
  }, 150_000);
});

describe('bad input gets a clear error, a non-zero exit and no process left behind', () => {
  it('a rank pointed at a coordinator that is not there', async () => {
    const r = await runCli(['rank', '--coordinator', 'ws://127.0.0.1:9', '--connect-timeout', '1'], 20_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach the coordinator at ws:\/\/127\.0\.0\.1:9/);
  });

  it('a rank given a coordinator address that is not a URL', async () => {
    const r = await runCli(['rank', '--coordinator', 'not a url', '--connect-timeout', '1'], 20_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--coordinator not a url: not a ws:\/\/ or wss:\/\/ address/);
  });

  it.each([
    [['local', '--scheme', 'zero4'], /--scheme: "zero4" is not one of dp\|zero1\|zero2\|zero3\|hsdp\|zeropp\|all/],
    [['local', '--world', '4', '--batch', '10'], /--batch 10 does not divide evenly over --world 4/],
    [['local', '--model', '10'], /--model: "10" must be at least two positive integer layer widths/],
    [['local', '--wire-dtype', 'fp8'], /Invalid values:[\s\S]*wire-dtype/],
    [['local', '--no-such-option'], /Unknown argument/],
    [['rank'], /--coordinator is required \(or MASTER_ADDR and MASTER_PORT/],
  ])('%j', async (args, message) => {
    const r = await runCli(args as string[], 20_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message as RegExp);
  });

  it('--max-rank-memory leaves out the schemes over it and runs the rest, saying so; with none under it, the run is refused before any rank starts', async () => {
    // 512,1024,512,10 has 1,055,242 parameters: DP needs ~16.9 MB per rank, ZeRO-3 ~5.3 MB at peak on 4 ranks.
    const some = await runCli(['local', '--world', '4', '--max-rank-memory', '8MB', '--steps', '2'], 60_000);
    expect(some.code, some.stderr.slice(-600)).toBe(0);
    expect(some.stdout).toMatch(
      /^--max-rank-memory 7\.63 MiB: left out DP \(model of .* does not fit in 7\.63 MiB per rank: DP \(16\.1 MiB\) at peak\. Schemes that fit: .*ZeRO-3/m,
    );
    expect(some.stdout).not.toMatch(/^DP /m);
    expect(some.stdout).toMatch(/^ZeRO-3 /m);
    const none = await runCli(['local', '--world', '4', '--max-rank-memory', '1MB', '--steps', '1'], 30_000);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--max-rank-memory: .* does not fit in 977 KiB per rank: .*No scheme fits\./);
    // Refused before any rank was started.
    expect(logLines(none.stderr).filter((l) => typeof l.msg === 'string' && /joined|assigned/.test(l.msg as string))).toEqual([]);
  });
});

describe('zerowire plan', () => {
  it('runs as the README runs it, `npx zerowire` in the repository: the build leaves the bin executable', async () => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile('npx', ['zerowire', 'plan', '--params', '13e9', '--world', '16', '--memory', '80GB'], { cwd: ROOT }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(r.stderr).not.toMatch(/Permission denied/);
    expect(r.stderr, 'npm prints no warning (.npmrc), not even on an older Node than our engines').not.toMatch(/npm warn/i);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ZeRO-3 .* yes/m);
  });

  it("reproduces the chapter's exercise: 13e9 parameters, 16 ranks, 80 GB", async () => {
    const r = await runCli(['plan', '--params', '13e9', '--world', '16', '--memory', '80GB']);
    expect(r.code).toBe(0);
    const line = (name: string) => r.stdout.split('\n').find((l) => l.startsWith(name))!;
    expect(line('DP ')).toMatch(/208\.00 .* no/);
    expect(line('ZeRO-1')).toMatch(/61\.75 .* yes/);
    expect(line('ZeRO-2')).toMatch(/37\.38 .* yes/);
    expect(line('ZeRO-3')).toMatch(/13\.00 .* yes/);
  });

  it('--accumulate K: the fp32 accumulator in the model states, and ZeRO-2/3 sending every micro-batch', async () => {
    const r = await runCli(['plan', '--params', '1e9', '--world', '4', '--accumulate', '4']);
    expect(r.code, r.stderr).toBe(0);
    const cells = (name: string) =>
      r.stdout
        .split('\n')
        .find((l) => l.startsWith(name))!
        .trim()
        .split(/\s+/)
        .slice(-3);
    // bf16 params: DP 16 + 4 B/param; sent 2(N-1)/N * 2 B = 3 GB for DP and ZeRO-1, (4+1)/2 of it for
    // ZeRO-2, 3*4/2 of it for ZeRO-3.
    expect(cells('DP ')).toEqual(['20.00', '20.000', '3.00']);
    expect(cells('ZeRO-1')).toEqual(['11.00', '11.000', '3.00']);
    expect(cells('ZeRO-2')).toEqual(['6.50', '6.500', '7.50']);
    expect(cells('ZeRO-3')).toEqual(['5.00', '5.000', '18.00']);
    expect(r.stdout).toMatch(/and the fp32 gradient sum of 4 micro-batches/);
  });

  it('--shard-group G adds the hybrid: 16/G bytes per parameter, group bytes plus a shard across groups', async () => {
    const r = await runCli(['plan', '--params', '1e9', '--world', '8', '--shard-group', '4']);
    expect(r.code, r.stderr).toBe(0);
    // 16/4 B/param; 3*(3/4)*2 GB in the group + 2*(1/2)*(2/4) GB across the 2 groups = 4.5 + 0.5.
    expect(
      r.stdout
        .split('\n')
        .find((l) => l.startsWith('HSDP'))!
        .trim()
        .split(/\s+/)
        .slice(-3),
    ).toEqual(['4.00', '4.000', '5.00']);
    const bad = await runCli(['plan', '--params', '1e9', '--world', '8', '--shard-group', '3']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--shard-group: 3 must divide --world 8 into at least 2 groups of at least 2 ranks/);
  });

  it('knows the transformer form: parameters from the shape, and activations per rank equal to what the GPT allocates', async () => {
    // GPT-2 small's shape with an untied head: 124.4M + 50257*768 = 163.0M parameters.
    const r = await runCli(['plan', '--model', 'gpt:12,768,12,1024,50257', '--world', '8', '--batch', '64']);
    expect(r.code, r.stderr).toBe(0);
    const spec = new GptSpec({ layers: 12, dim: 768, heads: 12, seq: 1024, vocab: 50257 });
    expect(spec.params).toBe(163_037_184);
    expect(r.stdout).toMatch(/^model gpt:12,768,12,1024,50257: 1\.630e\+8 parameters on 8 ranks/);
    expect(r.stdout).toContain(
      `activations per rank (gpt:12,768,12,1024,50257, global batch 64, 8 per rank): ${(spec.activationBytes(8) / 1e9).toFixed(2)} GB under every scheme`,
    );
    const both = await runCli(['plan', '--params', '1e9', '--model', '4,4']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/plan: give --params or --model \(or --hf-config\): one of them/);
  });

  it('refuses a parameter count that is not a number', async () => {
    const r = await runCli(['plan', '--params', 'lots']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--params: "lots" is not a positive number/);
  });
});
