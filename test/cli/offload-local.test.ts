// --offload on CPU ranks: the masters and Adam's moments (with optimizer,params ZeRO-3's 16-bit shard too) in
// host bands, every copy between device and host counted and equal to theory, the device's bands smaller by what
// theory moves; the math unchanged, so a plain torch.optim.Adam replay (test/helpers/torch_lora.py, every tensor
// trained) ends where every offloading scheme does, by the reference rule (test/helpers/reference.ts); and ZeRO-Offload's delayed update against the same replay
// with the update delayed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../shared/accounting/report.js';
import { RunPlan } from '../../shared/accounting/run-plan.js';
import { runCli } from '../helpers/cli.js';
import { expectAsCloseAsTorch, maxTensorDiff, replayBoth, runReplay, tensorsOf } from '../helpers/reference.js';
import { requireTorch } from '../helpers/torch.js';

const SCRIPT = fileURLToPath(new URL('../helpers/torch_lora.py', import.meta.url));

const MODELS = [
  { kind: 'mlp', model: '24,48,32,10', shape: '24,48,32,10', batch: 16 },
  { kind: 'gpt', model: 'gpt:2,32,2,16,32', shape: '2,32,2,16,32', batch: 8 },
];
const RUNS = [
  { offload: ['--offload', 'optimizer'], schemes: ['zero1', 'zero2', 'zero3', 'hsdp'], mode: 'plain' },
  { offload: ['--offload', 'optimizer,params'], schemes: ['zero3', 'hsdp'], mode: 'plain' },
  { offload: ['--offload', 'optimizer', '--offload-dpu'], schemes: ['zero2', 'zero3'], mode: 'dpu' },
];

describe('local --offload', () => {
  for (const m of MODELS)
    for (const o of RUNS)
      it(`${m.kind} ${o.offload.join(' ')}: host-device bytes and both sides' memory = theory; the weights = torch.optim.Adam's`, async (ctx) => {
        const dir = mkdtempSync(join(tmpdir(), `zerowire-offload-${m.kind}-`));
        try {
          const [out, dump, steps] = [join(dir, 'report.json'), join(dir, 'dump'), 3];
          const args = ['local', '--world', '4', '--shard-group', '2', '--model', m.model, '--scheme', o.schemes.join(','), ...o.offload];
          const train = ['--accumulate', '2', '--wire-dtype', 'fp32', '--lr', '0.001', '--batch', String(m.batch), '--samples', '64', '--steps', String(steps)];
          const r = await runCli([...args, ...train, '--preflight', 'off', '--out', out, '--dump', dump], 120_000);
          expect(r.code, r.stderr).toBe(0);
          const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
          expect(report.rows.map((x) => x.scheme)).toEqual(o.schemes);
          const plain = new RunPlan({ ...report.config, offload: undefined }, report.world);
          for (const x of report.rows) {
            const off = x.offload!;
            expect(off.pcie.measured, x.scheme).toEqual(off.pcie.theory);
            expect(off.pcie.measured.d2h, x.scheme).toBeGreaterThan(0);
            expect(off.host.measured, x.scheme).toBe(off.host.theory);
            expect(x.resident.measured, x.scheme).toBe(x.resident.theory);
            expect(x.peak.measured, x.scheme).toBe(x.peak.theory);
            expect(x.sentPerStep.payload, x.scheme).toBe(x.sentPerStep.theory);
            // what left the device is what the host holds, but the fp32 gradient Adam reads (a scratch on the device without offload)
            const moved = plain.memory(x.scheme).resident - x.resident.measured * x.params;
            const fp32Grad = (off.host.theory - moved) / 4;
            expect(moved, x.scheme).toBeGreaterThan(0);
            expect(fp32Grad, x.scheme).toBe(plain.layoutFor(x.scheme, 0).shardTotal);
          }
          requireTorch(ctx, 'the offload replay (test/helpers/torch_lora.py)');
          const replayArgs = (mode: string) => (file: string) => [
            join(dump, 'initial.safetensors'),
            join(dump, 'data.safetensors'),
            file,
            m.kind,
            m.shape,
            String(steps),
            '0.001',
            '8',
            '.',
            mode,
          ];
          const ref = await replayBoth(SCRIPT, replayArgs(o.mode), dir);
          // the delayed update is told apart from the plain one: the plain replay is far from a DPU run
          const other = o.mode === 'dpu' ? runReplay(SCRIPT, replayArgs('plain'), dir, 'float32') : null;
          for (const scheme of o.schemes) {
            const final = tensorsOf(join(dump, `final-${scheme}.safetensors`));
            expectAsCloseAsTorch(`${m.kind} ${o.offload.join(' ')} ${scheme} (${o.mode}) after ${steps} steps`, final, ref);
            if (other) expect(maxTensorDiff(final, other), `${scheme} against the undelayed replay`).toBeGreaterThan(1e-4);
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }, 180_000);

  it('on a modeled GPU: the copies on the host link and the host Adam measured here, in the report and beside plan', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-offload-whatif-'));
    try {
      const out = join(dir, 'r.json');
      const job = ['--model', 'gpt:2,64,4,32', '--world', '2', '--compute', 'model:a10', '--offload', 'optimizer'];
      const r = await runCli(['local', ...job, '--scheme', 'zero2,zero3', '--steps', '3', '--preflight', 'off', '--out', out], 120_000);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        /^the host's Adam at [\d.]+e9 parameters\/s per rank \(measured here: [\d.]+e9 parameters\/s on a core, \d+ cores shared by 2 ranks\)$/m,
      );
      expect(r.stdout).toMatch(/ZeRO-2 down [\d.]+ KiB, up [\d.]+ KiB \(modeled: copies [\d.]+ ms on the host link, the host's Adam [\d.]+ ms\), on the host/);
      const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
      for (const x of report.rows) {
        expect(x.offload!.pcie.measured, x.scheme).toEqual(x.offload!.pcie.theory);
        expect(x.offload!.ms!.hostAdam, x.scheme).toBeGreaterThan(0);
      }
      const plan = await runCli(['plan', ...job, '--gbit', '10']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/host GB \(2 ranks\) +offload ms/);
      expect(plan.stdout).not.toMatch(/^DP /m); // DP cannot offload: left out
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('refuses what DeepSpeed cannot offload, naming the option, before a rank starts', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['--offload', 'optimizer', '--scheme', 'dp,zero2'],
        /--offload optimizer with --scheme dp: it cannot offload: its optimizer state is whole on every rank/,
      ],
      [['--offload', 'optimizer,params', '--scheme', 'zero2'], /with --scheme zero2: it cannot offload parameters: that is ZeRO-3's/],
      [['--offload', 'gpu', '--scheme', 'zero2'], /--offload: "gpu" is not optimizer or optimizer,params/],
      [['--offload-dpu', '--scheme', 'zero2'], /--offload-dpu: only with --offload optimizer/],
      [
        ['--offload', 'optimizer', '--scheme', 'zero2', '--host-adam-gparams', '0', '--compute', 'model:h100'],
        /--host-adam-gparams: 0 must be a positive rate/,
      ],
      [['--offload', 'optimizer', '--scheme', 'zero2', '--host-adam-gparams', '2'], /--host-adam-gparams: only with --compute model:PRESET/],
    ];
    for (const [args, want] of cases) {
      const r = await runCli(['local', '--world', '2', '--model', '16,8,4', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(want);
    }
  });
});
