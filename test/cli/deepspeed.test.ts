// --deepspeed: a DeepSpeed config read as zerowire's options, every key printed with what it became ("auto" as
// the Hugging Face Trainer resolves it, unknown keys named), the command line's flags winning over the file.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readReport } from '../../shared/accounting/report-file.js';
import { RunPlan } from '../../shared/accounting/run-plan.js';
import { persistedLayout } from '../../shared/training/persisted-layout.js';
import { describe, expect, it } from 'vitest';
import { readDeepspeedConfig, type DsContext } from '../../cli/deepspeed.js';
import { givenOnCommandLine } from '../../cli/config-mapping.js';
import { runCli } from '../helpers/cli.js';

const Z3 = JSON.parse(readFileSync(new URL('../../deploy/deepspeed/ds_z3_config.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const CTX: DsContext = { hidden: 4096, world: 16, given: { batch: 32, accumulate: 2, lr: 1e-4 }, bytesPerElement: 2 };
const none = () => false;
const row = (rows: { key: string; became: string }[], key: string) => rows.find((r) => r.key === key)?.became;

describe('--deepspeed', () => {
  it('maps a ZeRO-3 config (as LlamaFactory ships it), "auto" from the hidden size, every key accounted for', () => {
    const { set, rows } = readDeepspeedConfig({ ...Z3, flux_capacitor: 1 }, 'ds.json', CTX, none);
    expect(set).toEqual({
      scheme: 'dp,zero3',
      overlap: 'on',
      bucketMib: (4096 * 4096 * 2) / 2 ** 20,
      gatherAhead: 1,
      persistThreshold: 40960,
      accumulate: 2,
      wireDtype: 'bf16',
      recomputeRegather: true,
    });
    // stage 3's second row: under --recompute, DeepSpeed gathers a block again after its recompute
    expect(rows.filter((r) => r.key === 'zero_optimization.stage').map((r) => r.became)).toEqual([
      '--scheme dp,zero3 (ZeRO-3, beside DP as the baseline)',
      '--recompute-regather true (with --recompute: a block gathered for its recompute, released, and gathered again for its backward pass, as DeepSpeed does)',
    ]);
    expect(row(rows, 'zero_optimization.reduce_bucket_size')).toBe(
      '--bucket-mib 32 (16777216 elements: "auto" is hidden² (the Trainer); ZeRO-2/3 reduce a unit at a time here, whatever the size)',
    );
    expect(row(rows, 'zero_optimization.stage3_param_persistence_threshold')).toBe(
      '--persist-threshold 40960 (tensors of at most 40960 elements kept whole, never gathered: "auto" is 10·hidden (the Trainer))',
    );
    expect(row(rows, 'flux_capacitor')).toBe('left aside: not understood');
    expect(row(rows, 'gradient_clipping')).toMatch(/^left aside: not applied here/);
    const keys = [
      ...Object.keys(Z3).filter((k) => k !== 'zero_optimization' && k !== 'bf16'),
      ...Object.keys(Z3.zero_optimization as object).map((k) => `zero_optimization.${k}`),
    ];
    for (const key of keys)
      expect(
        rows.some((r) => r.key === key),
        key,
      ).toBe(true);
    expect(row(rows, 'bf16.enabled')).toBe('--wire-dtype bf16 (mixed precision)');
  });

  it("stage 3's regather under --recompute gives way to --no-recompute-regather on the command line", () => {
    expect(givenOnCommandLine('--recompute-regather', ['--recompute', '--no-recompute-regather'])).toBe(true);
    expect(givenOnCommandLine('--recompute-regather', ['--recompute'])).toBe(false);
    const { set, rows } = readDeepspeedConfig({ zero_optimization: { stage: 3 } }, 'ds.json', CTX, (flag) => flag === '--recompute-regather');
    expect(set.recomputeRegather).toBeUndefined();
    expect(rows.filter((r) => r.key === 'zero_optimization.stage')[1].became).toMatch(/: the command line's --recompute-regather won$/);
  });

  it('batches, ZeRO++ and precision; a flag on the command line wins and is said to', () => {
    const ds = {
      train_micro_batch_size_per_gpu: 2,
      gradient_accumulation_steps: 4,
      fp16: { enabled: true },
      zero_optimization: { stage: 3, zero_hpz_partition_size: 8, zero_quantized_weights: true, zero_quantized_gradients: true },
    };
    const { set, rows } = readDeepspeedConfig(ds, 'ds.json', CTX, (flag) => flag === '--scheme');
    expect(set).toEqual({ accumulate: 4, batch: 2 * 16 * 4, wireDtype: 'bf16', hpz: true, shardGroup: 8, qwz: true, qgz: true, recomputeRegather: true });
    expect(row(rows, 'zero_optimization.stage')).toBe("--scheme dp,zero3 (ZeRO-3, beside DP as the baseline): the command line's --scheme won");
    expect(row(rows, 'fp16.enabled')).toMatch(/fp16 as bf16/);
  });

  it('offload_optimizer and offload_param (device cpu) as --offload, the stage alone (DP cannot offload)', () => {
    const z = { stage: 3, offload_optimizer: { device: 'cpu', pin_memory: true }, offload_param: { device: 'cpu' } };
    const { set, rows } = readDeepspeedConfig({ zero_optimization: z }, 'ds.json', CTX, none);
    expect(set).toMatchObject({ scheme: 'zero3', offload: 'optimizer,params' });
    expect(row(rows, 'zero_optimization.stage')).toBe('--scheme zero3 (ZeRO-3, alone: DP cannot offload)');
    const two = readDeepspeedConfig({ zero_optimization: { ...z, stage: 2 } }, 'ds.json', CTX, none);
    expect(two.set).toMatchObject({ scheme: 'zero2', offload: 'optimizer' });
    expect(row(two.rows, 'zero_optimization.offload_param')).toBe('left aside: parameter offload is stage 3 only');
    const nvme = readDeepspeedConfig({ zero_optimization: { stage: 3, offload_optimizer: { device: 'nvme' } } }, 'ds.json', CTX, none);
    expect(row(nvme.rows, 'zero_optimization.offload_optimizer')).toMatch(/device nvme: only the host's memory \(cpu\) is modeled/);
  });

  it("reads a number or truth value written as a string, as DeepSpeed's pydantic config does, and says so", () => {
    // Qwen's published examples/sft/ds_config_zero3.json writes "stage3_prefetch_bucket_size": "0"
    const z = { stage: '3', overlap_comm: 'true', stage3_prefetch_bucket_size: '0' };
    const { set, rows } = readDeepspeedConfig({ zero_optimization: z }, 'ds.json', CTX, none);
    expect(set).toMatchObject({ scheme: 'dp,zero3', overlap: 'on', gatherAhead: 0 });
    expect(row(rows, 'zero_optimization.stage3_prefetch_bucket_size')).toBe(
      '--gather-ahead 0 (the string read as 0, as DeepSpeed reads it; no prefetch: each unit gathered when it is reached)',
    );
    expect(row(rows, 'zero_optimization.overlap_comm')).toBe('--overlap on (the string read as true, as DeepSpeed reads it)');
  });

  it("reads DeepSpeed's field names for the stage-3 keys, its deprecated name, and a zero reduce bucket", () => {
    // axolotl's and LLaVA's configs write max_live_parameters and gather_16bit_weights_on_model_save; the
    // Hugging Face tests' ds_config_zero3.json writes reduce_bucket_size 0 and the fp16 name of the last
    const z = { stage: 3, param_persistence_threshold: 100, max_live_parameters: 0, stage3_gather_fp16_weights_on_model_save: true, reduce_bucket_size: 0 };
    const { set, rows } = readDeepspeedConfig({ zero_optimization: z, zero_force_ds_cpu_optimizer: false }, 'ds.json', CTX, none);
    expect(set).toMatchObject({ persistThreshold: 100, bucketMib: 1 / 1024 });
    expect(row(rows, 'zero_optimization.param_persistence_threshold')).toMatch(
      /^read as zero_optimization\.stage3_param_persistence_threshold: --persist-threshold 100 /,
    );
    expect(row(rows, 'zero_optimization.max_live_parameters')).toMatch(/^read as zero_optimization\.stage3_max_live_parameters: left aside: /);
    expect(row(rows, 'zero_optimization.stage3_gather_fp16_weights_on_model_save')).toMatch(/stage3_gather_16bit_weights_on_model_save: left aside/);
    expect(row(rows, 'zero_optimization.reduce_bucket_size')).toMatch(/0: each gradient reduced on its own/);
    expect(row(rows, 'zero_force_ds_cpu_optimizer')).toBe('left aside: no bearing on a training step');
    expect(() =>
      readDeepspeedConfig({ zero_optimization: { stage: 3, prefetch_bucket_size: 1, stage3_prefetch_bucket_size: 2 } }, 'ds.json', CTX, none),
    ).toThrow(/keys "zero_optimization\.prefetch_bucket_size" and "zero_optimization\.stage3_prefetch_bucket_size" name the same setting/);
    expect(() => readDeepspeedConfig({ zero_optimization: { stage: 3, prefetch_bucket_size: -1 } }, 'ds.json', CTX, none)).toThrow(
      /key "zero_optimization\.prefetch_bucket_size": expected a count of elements, got -1/,
    );
  });

  it('refuses what it cannot read, naming the file and the key', () => {
    const bad = (o: Record<string, unknown>) => () => readDeepspeedConfig(o, 'ds.json', CTX, none);
    expect(bad({ zero_optimization: { stage: 4 } })).toThrow(/^--deepspeed ds.json: key "zero_optimization.stage": expected a stage 0, 1, 2 or 3, got 4$/);
    expect(bad({ zero_optimization: { stage: 2, overlap_comm: 'maybe' } })).toThrow(
      /key "zero_optimization.overlap_comm": expected true or false, got "maybe"/,
    );
    expect(bad({ zero_optimization: { stage: 3, stage3_prefetch_bucket_size: '5e7' } })).toThrow(/expected a count of elements, got "5e7"/);
    expect(bad({ train_batch_size: 100, train_micro_batch_size_per_gpu: 2 })).toThrow(
      /train_batch_size 100 is not train_micro_batch_size_per_gpu 2 × 16 ranks × 2 steps/,
    );
    expect(bad({ optimizer: { type: 'Lamb' } })).toThrow(/key "optimizer.type": only Adam and AdamW are read/);
    expect(() => readDeepspeedConfig({ zero_optimization: { stage: 3, reduce_bucket_size: 'auto' } }, 'ds.json', { ...CTX, hidden: null }, none)).toThrow(
      /"auto" needs a model with a hidden size/,
    );
  });

  it('a local run prints the table and trains what the file says, the command line winning', async () => {
    const model = ['--model', 'llama:2,64,4,2,172,32', '--batch', '4', '--steps', '2', '--preflight', 'off', '--world', '2'];
    const r = await runCli(['local', ...model, '--deepspeed', 'deploy/deepspeed/ds_z3_config.json', '--scheme', 'zero2'], 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^deploy\/deepspeed\/ds_z3_config.json read as \(key, value, what it became\):$/m);
    expect(r.stdout).toMatch(/zero_optimization\.stage +3 +--scheme dp,zero3 \(ZeRO-3, beside DP as the baseline\): the command line's --scheme won/);
    expect(r.stdout).toMatch(/^ZeRO-2 /m);
    expect(r.stdout).not.toMatch(/^ZeRO-3 /m);
  }, 60_000);

  it("stage3_param_persistence_threshold on CPU ranks: ZeRO-3 sends the theory's bytes, none of them for the persisted tensors", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-persist-'));
    const ds = join(dir, 'ds.json');
    writeFileSync(ds, JSON.stringify({ zero_optimization: { stage: 3, stage3_param_persistence_threshold: 256 } }));
    const model = ['--model', 'gpt:2,32,4,16,64', '--batch', '8', '--steps', '2', '--preflight', 'off', '--world', '4'];
    const r = await runCli(['local', ...model, '--deepspeed', ds, '--out', join(dir, 'r.json')], 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/stage3_param_persistence_threshold +256 +--persist-threshold 256 \(tensors of at most 256 elements kept whole, never gathered\)/);
    const report = readReport(join(dir, 'r.json'), 'test');
    const z3 = report.rows.find((x) => x.scheme === 'zero3')!;
    expect(z3.sentPerStep.payload).toBe(z3.sentPerStep.theory);
    expect(z3.resident.measured).toBe(z3.resident.theory);
    // Against plain ZeRO-3, per rank (the mean) and unit with persisted tensors: its two gathers no longer carry
    // them (P) nor the padding (padded - size), and one all-gather of them is added: (N-1)/N · b · (2·pad + P).
    const plan = new RunPlan(report.config, 4);
    const plain = new RunPlan({ ...report.config, persist: undefined }, 4);
    const p = persistedLayout(plan.layout0, 256);
    expect(p.keptTotal).toBeGreaterThan(0);
    const saved = plan.layout0.units.reduce((t, u, i) => {
      const kept = p.units[i].trainable?.kept ?? 0;
      return t + (kept ? (3 / 4) * 2 * (2 * (u.padded - u.size) + kept) : 0);
    }, 0);
    expect(plain.traffic('zero3') - plan.traffic('zero3')).toBeCloseTo(saved, 6);
  }, 60_000);
});
