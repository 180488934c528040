// `zerowire local --lora 4`: every scheme (HSDP included) with gradient accumulation, fp32 on the wire, on the
// MLP, the GPT and the Llama, against a full-batch torch.optim.Adam replay over the adapters alone
// (test/helpers/torch_lora.py, PEFT's LoRA forward): the adapters by the reference rule (test/helpers/reference.ts), the frozen base as the ranks
// held it bit for bit the initial one; bytes at the socket, resident and peak memory as theory.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../shared/accounting/report.js';
import { parseSafetensors } from '../../shared/io/safetensors.js';
import { runCli } from '../helpers/cli.js';
import { expectAsCloseAsTorch, replayBoth, tensorsOf } from '../helpers/reference.js';
import { requireTorch } from '../helpers/torch.js';

const SCRIPT = fileURLToPath(new URL('../helpers/torch_lora.py', import.meta.url));
const SCHEMES = ['dp', 'zero1', 'zero2', 'zero3', 'hsdp'];

const LORA = { args: ['--lora', '4,8'], trainable: 'lora_', lr: '0.01' }; // B starts at zero: a rate that moves it visibly
const CASES = [
  { kind: 'mlp', model: '24,48,32,10', shape: '24,48,32,10', batch: 16, ...LORA },
  { kind: 'gpt', model: 'gpt:2,32,2,16,32', shape: '2,32,2,16,32', batch: 8, ...LORA },
  { kind: 'llama', model: 'llama:2,32,4,2,64,16,32', shape: '2,32,4,2,64,16,32', batch: 8, ...LORA },
  // no adapters: the embeddings and the first block frozen, so the backward pass stops after block 1
  {
    kind: 'gpt',
    model: 'gpt:2,32,2,16,32',
    shape: '2,32,2,16,32',
    batch: 8,
    args: ['--freeze', 'embeddings,blocks.0'],
    trainable: '^(h\\.1\\.|ln_f|head)',
    lr: '0.001',
  },
];

const tensors = (path: string) => parseSafetensors(readFileSync(path));

describe('local --lora', () => {
  for (const c of CASES)
    it(`${c.kind} ${c.args.join(' ')}: every scheme and HSDP with --accumulate 2 trains what trains as torch.optim.Adam does, the rest untouched`, async (ctx) => {
      const dir = mkdtempSync(join(tmpdir(), `zerowire-lora-${c.kind}-`));
      try {
        const [out, dump, steps] = [join(dir, 'report.json'), join(dir, 'dump'), 3];
        const args = ['local', '--world', '4', '--model', c.model, '--scheme', 'all', '--shard-group', '2', '--accumulate', '2', '--wire-dtype', 'fp32'];
        const r = await runCli(
          [
            ...args,
            ...c.args,
            '--lr',
            c.lr,
            '--batch',
            String(c.batch),
            '--samples',
            '64',
            '--steps',
            String(steps),
            '--preflight',
            'off',
            '--out',
            out,
            '--dump',
            dump,
          ],
          120_000,
        );
        expect(r.code, r.stderr).toBe(0);
        const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
        expect(report.rows.map((x) => x.scheme)).toEqual(SCHEMES);
        for (const x of report.rows) {
          expect(x.trainableParams, x.scheme).toBeLessThan(x.params / 2);
          expect(x.sentPerStep.payload, x.scheme).toBe(x.sentPerStep.theory);
          expect(x.resident.measured, x.scheme).toBe(x.resident.theory);
          expect(x.peak.measured, x.scheme).toBe(x.peak.theory);
          expect(x.activations.measured, x.scheme).toBe(x.activations.estimate);
          expect(x.sentPerStep.frozenTheory > 0, x.scheme).toBe(x.scheme === 'zero3' || x.scheme === 'hsdp');
        }
        expect(report.agreement?.agree).toBe(true);
        // DP sends only what trains: 2(N-1)/N of it (the ring's padding aside, within 1%)
        const dp = report.rows[0];
        expect(dp.sentPerStep.payload).toBeLessThanOrEqual(1.01 * ((2 * 3) / 4) * dp.trainableParams * 4);
        const initial = tensors(join(dump, 'initial.safetensors'));
        const trains = new RegExp(c.trainable);
        const isAdapter = (name: string) => trains.test(name);
        expect([...initial.keys()].filter(isAdapter).length).toBeGreaterThan(0);
        for (const scheme of SCHEMES) {
          const final = tensors(join(dump, `final-${scheme}.safetensors`));
          for (const [name, t] of initial)
            if (!isAdapter(name))
              expect(
                Buffer.compare(Buffer.from((final.get(name)!.data as Float32Array).buffer), Buffer.from((t.data as Float32Array).buffer)),
                `${scheme} ${name}`,
              ).toBe(0);
        }
        requireTorch(ctx, 'the LoRA replay (test/helpers/torch_lora.py)');
        const initialArgs = [join(dump, 'initial.safetensors'), join(dump, 'data.safetensors')];
        const ref = await replayBoth(SCRIPT, (o) => [...initialArgs, o, c.kind, c.shape, String(steps), c.lr, '8', c.trainable], dir);
        for (const scheme of SCHEMES) {
          const final = tensors(join(dump, `final-${scheme}.safetensors`));
          let moved = 0;
          for (const [name, t] of initial) {
            if (!isAdapter(name)) continue;
            const [a, init] = [final.get(name)!.data as Float32Array, t.data as Float32Array];
            for (let i = 0; i < a.length; i++) moved = Math.max(moved, Math.abs(a[i] - init[i]));
          }
          const label = `${c.kind} ${c.args.join(' ')} ${scheme} over what trains after ${steps} steps`;
          const ours = tensorsOf(join(dump, `final-${scheme}.safetensors`));
          const v = expectAsCloseAsTorch(label, ours, ref, isAdapter);
          console.log(`  (what trains moved up to ${moved.toExponential(2)}, ${(moved / v.ours).toExponential(1)} times the error)`);
          expect(moved, scheme).toBeGreaterThan(1e-3);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 180_000);
});

describe('local --lora, other modes', () => {
  it('a compute thread, one unit for the whole model and bf16 on the wire train as inline layer units do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-lora-modes-'));
    try {
      const base = [
        'local',
        '--world',
        '2',
        '--model',
        'gpt:2,32,2,16,32',
        '--lora',
        '4',
        '--batch',
        '4',
        '--samples',
        '32',
        '--steps',
        '3',
        '--lr',
        '0.01',
        '--preflight',
        'off',
      ];
      const reports: Report[] = [];
      for (const extra of [
        ['--compute', 'inline'],
        ['--compute', 'thread'],
        ['--compute', 'inline', '--unit', 'model'],
      ]) {
        const out = join(dir, `${reports.length}.json`);
        const r = await runCli([...base, ...extra, '--out', out], 60_000);
        expect(r.code, r.stderr).toBe(0);
        const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
        for (const x of report.rows) {
          expect(x.sentPerStep.payload, `${extra.join(' ')} ${x.scheme}`).toBe(x.sentPerStep.theory);
          expect(x.resident.measured, `${extra.join(' ')} ${x.scheme}`).toBe(x.resident.theory);
          expect(x.peak.measured, `${extra.join(' ')} ${x.scheme}`).toBe(x.peak.theory);
        }
        reports.push(report);
      }
      const [inline, thread, whole] = reports;
      expect(thread.rows.map((x) => x.losses)).toEqual(inline.rows.map((x) => x.losses));
      // one unit: the same products, the ring's segments cut elsewhere (bf16 rounds the sums differently)
      for (const [i, x] of whole.rows.entries()) expect(Math.abs(x.finalLoss - inline.rows[i].finalLoss)).toBeLessThan(2e-2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
