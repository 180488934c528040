// --compute model:PRESET as a user runs it: real processes and sockets, every collective's bytes on the wire,
// compute as the modeled GPU's time, no values anywhere; and the refusals that name the problem.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../shared/accounting/report.js';
import { RunPlan } from '../../shared/accounting/run-plan.js';
import { SCHEME_TABLE } from '../../shared/training/schemes/table.js';
import { MODEL_BANDS } from '../../shared/tensor/memory-ledger.js';
import { passTimes } from '../../shared/whatif/modeled-compute.js';
import { optimizerWork } from '../../shared/whatif/model-passes.js';
import { presetCost } from '../../shared/whatif/preset.js';
import { smallConfig } from '../helpers/config.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'zerowire-whatif-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A vocabulary beyond our 16-bit token ids: only modeled compute can run it (it has no data).
const MODEL = 'gpt:3,256,4,128,100000';

describe('zerowire local --compute model:h200', () => {
  it('runs every scheme with modeled compute: bytes equal theory, compute equals the model, no values', async () => {
    const out = join(dir, 'whatif.json');
    const args = [
      'local',
      '--world',
      '4',
      '--model',
      MODEL,
      '--compute',
      'model:h200',
      '--scheme',
      'all',
      '--steps',
      '3',
      '--batch',
      '16',
      '--accumulate',
      '2',
      '--recompute',
    ];
    const html = join(dir, 'whatif.html');
    const r = await runCli([...args, '--out', out, '--html', html], 120_000);
    expect(r.stderr).not.toMatch(/"level":50/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/what-if: compute modeled on NVIDIA H200 SXM/);
    expect(r.stdout).toMatch(/losses: not computed/);
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
    expect(report.device?.name).toBe('h200');
    expect(report.agreement).toBeNull(); // no values: no losses to compare
    // The page says which figures are modeled, as the text does.
    const page = readFileSync(html, 'utf8');
    expect(page).toMatch(/What-if: compute modeled/);
    expect(page).toMatch(/modeled = the cost model/);
    expect(report.rows.map((x) => x.scheme)).toEqual(['dp', 'zero1', 'zero2', 'zero3']);

    // What the model says one rank computes per step: 2 micro-batches of 2 sequences, each forward + backward
    // (with the blocks recomputed), then Adam over the parameters this rank updates.
    const config = smallConfig({ model: MODEL, compute: 'model:h200', batch: 16, accumulate: 2, recompute: true, wireDtype: 'bf16' });
    const plan = new RunPlan(config, 4);
    const cost = presetCost('h200');
    const t = passTimes(plan.gpu, cost, 2, true);
    const passes = [...t.forward, ...t.backward].reduce((a, b) => a + b, 0);
    for (const x of report.rows) {
      expect(x.sentPerStep.payload, x.scheme).toBe(x.sentPerStep.theory);
      expect(x.finalLoss).toBeNull(); // NaN in the report: no loss without values
      const owned = SCHEME_TABLE[x.scheme].shardOptimizer ? plan.sizes.shardTotal : plan.sizes.paddedTotal;
      const expected = 2 * passes + cost.chainMs(optimizerWork(owned, 2));
      expect(x.whatif!.modeledComputeMs / expected, x.scheme).toBeCloseTo(1, 9);
      // The step waited for the modeled compute, and the network came on top of it.
      expect(x.time.stepMs).toBeGreaterThan(expected);
      expect(x.whatif!.achievedMfu).toBeLessThan(x.whatif!.modeledMfu);
      expect(x.whatif!.collectives.length).toBeGreaterThan(0);
    }
    // plan --run without --gbit predicts on the slowest link the run's pre-flight measured (loopback here).
    // Each link read as the report reads it: the better of one stream and several.
    const rates = report.network.preflight!.links.map((l) => Math.max(l.mbit, l.mbitMulti));
    const predicted = await runCli(['plan', '--run', out]);
    expect(predicted.code, predicted.stderr).toBe(0);
    expect(predicted.stdout).toContain(`links of ${(Math.min(...rates) / 1000).toPrecision(3)} Gbit/s`);
    expect(predicted.stdout).toMatch(/\(the slowest link the run's pre-flight measured\)/);
    expect((await runCli(['plan', '--run', out, '--gbit', '25'])).stdout).toMatch(/links of 25\.0 Gbit\/s/);
  }, 150_000);

  it('a modeled run with ZeRO++ beside ZeRO-3 warns of no disagreement: without values there are no losses to compare', async () => {
    const args = ['local', '--world', '4', '--shard-group', '2', '--compute', 'model:h200', '--scheme', 'zero3,zeropp', '--model', MODEL];
    const r = await runCli([...args, '--batch', '8', '--steps', '2', '--preflight', 'off'], 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/losses: not computed/);
    expect(r.stderr).not.toMatch(/schemes disagree/);
  }, 90_000);

  it("a modeled fp32 run's ledger holds the bands the real fp32 run holds, band by band, in every scheme", async () => {
    const base = [
      'local',
      '--world',
      '2',
      '--model',
      'gpt:2,64,4,32',
      '--scheme',
      'all',
      '--steps',
      '2',
      '--batch',
      '8',
      '--wire-dtype',
      'fp32',
      '--preflight',
      'off',
    ];
    const reports: Report[] = [];
    for (const [name, extra] of [
      ['real', []],
      ['modeled', ['--compute', 'model:h200']],
    ] as const) {
      const out = join(dir, `ledger-${name}.json`);
      const r = await runCli([...base, ...extra, '--out', out], 120_000);
      expect(r.code, r.stderr.slice(-800)).toBe(0);
      reports.push(JSON.parse(readFileSync(out, 'utf8')) as Report);
    }
    const [real, modeled] = reports;
    // The bands of model states and the schemes' own buffers; receive buffers, staging and the data are the
    // transport's and the workload's, which the synthetic collectives and modeled compute do not run.
    const SCHEME_BANDS = ['master', 'm', 'v', 'params16', 'frozen16', 'grads', 'accum', 'compute', 'gathered', 'secondary', 'bucket', 'comm'];
    for (const scheme of Object.keys(real.perRank)) {
      for (const [r, rank] of real.perRank[scheme].entries()) {
        const pick = (rec: Record<string, number>) => Object.fromEntries(Object.entries(rec).filter(([b, v]) => SCHEME_BANDS.includes(b) && v > 0));
        const m = modeled.perRank[scheme][r];
        expect(pick(m.memory.resident), `${scheme} rank ${r} resident`).toEqual(pick(rank.memory.resident));
        // At the peak, model states must match; the compute band then also holds the workload's own scratch
        // (the real GPT's kernels, which modeled compute does not run), and how many reduce-scatter buckets
        // are in flight at once depends on how long compute took (ZeRO-2 had 2 at its worst for real, 1 modeled).
        const states = (rec: Record<string, number>) =>
          Object.fromEntries(Object.entries(pick(rec)).filter(([b]) => (MODEL_BANDS as readonly string[]).includes(b)));
        expect(states(m.memory.peakPerBand), `${scheme} rank ${r} peak per band`).toEqual(states(rank.memory.peakPerBand));
      }
    }
  }, 200_000);

  it('plan --compute: DP does not fit an 80 GB card for a 7B shape on 4 ranks, ZeRO-3 does, with the numbers', async () => {
    const r = await runCli(['plan', '--compute', 'model:h100', '--model', 'llama2-7b', '--world', '4']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/on 4 NVIDIA H100 SXM 80GB \(modeled/);
    // Llama 2 7B as a Llama: 6.738e9 parameters; states + activations per GPU: DP 107.8 + 25.0 GB; ZeRO-3 28.2 +
    // 25.0 GB (flash attention: no T x T scores; the SwiGLU keeps four FF-wide tensors a block)
    expect(r.stdout).toMatch(/^llama:32,4096,32,32,11008,4096,32000 .*\(6\.738e\+9 parameters\)/m);
    expect(r.stdout).toMatch(/^DP +107\.8 +25\.0 +NO \(132\.8\)/m);
    expect(r.stdout).toMatch(/^ZeRO-3 +28\.2 +25\.0 +yes/m);
  });

  it('plan --compute --memory: fit judged against the memory given, and the header says so', async () => {
    const r = await runCli(['plan', '--compute', 'model:h100', '--model', 'llama2-7b', '--world', '4', '--memory', '24GB']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/per GPU GB \(--memory 24\.0 GB, not the card's 80\)/);
    expect(r.stdout).toMatch(/^ZeRO-3 +28\.2 +25\.0 +NO \(53\.2\)/m); // fits 80 GB, not 24
    const bad = await runCli(['plan', '--compute', 'model:h100', '--model', 'llama2-7b', '--world', '4', '--memory', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cannot read "lots" as a size/);
  });

  it('refuses what it cannot model, naming the problem', async () => {
    const base = ['local', '--world', '2', '--steps', '1'];
    const unknown = await runCli([...base, '--compute', 'model:tpu9']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no such device preset; known: h200, h100, a100, l40s, rtx4090, mi300x/);
    const dump = await runCli([...base, '--compute', 'model:h100', '--dump', join(dir, 'd')]);
    expect(dump.code).toBe(2);
    expect(dump.stderr).toMatch(/models compute and holds no values: drop --dump/);
    const tflops = await runCli([...base, '--tflops', '500']);
    expect(tflops.code).toBe(2);
    expect(tflops.stderr).toMatch(/--tflops: only with --compute model:PRESET/);
    const vocab = await runCli([...base, '--model', 'llama3-8b']);
    expect(vocab.code).toBe(2);
    expect(vocab.stderr).toMatch(/vocabulary 128256 is more than 65536: train it with --compute model:PRESET/);
  });
});
