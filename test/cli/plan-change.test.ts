// plan --deepspeed with a modeled device: the job as its config runs it, the smallest change of that config that
// fits and keeps exposed communication within --need, and --emit-deepspeed writing it: the written file, fed
// back, is predicted exactly as the change was.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobCandidates, withEdits } from '../../cli/ds-candidates.js';
import { runCli } from '../helpers/cli.js';

const Z3 = 'deploy/deepspeed/ds_z3_config.json';
// LlamaFactory issue 5014's job (docs/your-job.md): LoRA on Llama-3-8B, 2 hosts × 8 A800s, 10 Gbit/s
const JOB = [
  'plan',
  '--hf-config',
  'test/fixtures/hf/llama-3-8b.json',
  '--hostfile',
  'deploy/hostfile.example',
  '--compute',
  'model:a800',
  '--gbit',
  '10',
  '--batch',
  '32',
  '--accumulate',
  '2',
  '--seq',
  '2048',
  '--lora',
  '8',
  '--lora-targets',
  'q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj',
];

/** The "what to change" table's rows: label -> the rest of its cells. */
function changeRows(stdout: string): Map<string, string[]> {
  const at = stdout.indexOf('as configured, and what to change');
  expect(at, stdout).toBeGreaterThan(0);
  const lines = stdout.slice(at).split('\n').slice(3);
  const rows = new Map<string, string[]>();
  for (const line of lines) {
    const cells = line.trim().split(/\s{2,}/);
    if (cells.length < 5) break;
    rows.set(cells[0], cells.slice(1));
  }
  return rows;
}

describe('plan: what to change in a DeepSpeed config', () => {
  it('finds the smallest change, writes it, and the written file is predicted as the change was', { timeout: 60_000 }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'zw-change-')), 'ds_changed.json');
    const first = await runCli([...JOB, '--deepspeed', Z3, '--emit-deepspeed', out]);
    expect(first.code, first.stderr).toBe(0);
    const rows = changeRows(first.stdout);
    expect(rows.get('as configured')?.[0]).toBe('ZeRO-3');
    const m = /smallest change: (.+)\n/.exec(first.stdout);
    expect(m, first.stdout).not.toBeNull();
    const change = m![1];
    expect(change).toMatch(/^zero_optimization\.stage 3 → [012]$/); // LoRA across 10 Gbit: leave stage 3 (the report's own finding)
    const changed = rows.get(change)!;
    const share = Number(/\(([\d.]+)%\)/.exec(changed[4])![1]);
    expect(share).toBeLessThanOrEqual(10);
    expect(changed[2]).toBe('yes');
    // every other key as the user wrote it
    const written = JSON.parse(readFileSync(out, 'utf8')) as { zero_optimization: Record<string, unknown> };
    const original = JSON.parse(readFileSync(Z3, 'utf8')) as { zero_optimization: Record<string, unknown> };
    expect(written).toEqual(withEdits(original, [{ path: ['zero_optimization', 'stage'], value: Number(change.slice(-1)) }]));

    const again = await runCli([...JOB, '--deepspeed', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(changeRows(again.stdout).get('as configured')).toEqual(changed);
    expect(again.stdout).toContain('it meets that as configured: nothing to change.');
  });

  it('without a change that meets it, shows the closest that fit and writes nothing', { timeout: 60_000 }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'zw-change-')), 'never.json');
    const full = JOB.slice(0, JOB.indexOf('--lora'));
    const r = await runCli([...full, '--deepspeed', Z3, '--need', '5', '--emit-deepspeed', out]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('the closest that fit are shown');
    expect(r.stderr).toMatch(/--emit-deepspeed .*never\.json: no change meets --need 5%, so none is written/);
  });

  it("with offload in the file, its aim counts the host's copies and Adam as exposed, and says so", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-change-'));
    const file = join(dir, 'offload.json');
    const z3 = JSON.parse(readFileSync(Z3, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...z3, zero_optimization: { ...z3.zero_optimization, offload_optimizer: { device: 'cpu' } } }));
    const full = JOB.slice(0, JOB.indexOf('--lora'));
    const r = await runCli([...full, '--deepspeed', file, '--host-adam-gparams', '0.25']);
    expect(r.stdout).toContain("what to change so that it fits and exposed time (the network's, the host's copies and Adam) is at most 10% of the step");
    expect(r.stdout).toContain("exposed: the step's time past its compute, the network's and the host's (copies, Adam) together");
    // ZeRO-3's row: exposed is the step past its compute, host Adam included, so more than its communication alone
    const row = r.stdout.split('\n').find((l) => l.startsWith('ZeRO-3 '))!;
    const [compute, comm, exposed, step] = row.trim().split(/\s+/).slice(-5, -1).map(Number);
    expect(exposed).toBeCloseTo(step - compute, 0);
    expect(exposed).toBeGreaterThan(comm);
  });

  it(
    'a file whose settings cannot run with the command line (quantized weights with --lora): a row that says so, and the changes that can, exit 0',
    { timeout: 60_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'zerowire-qwz-'));
      const file = join(dir, 'ds.json');
      writeFileSync(file, JSON.stringify({ train_micro_batch_size_per_gpu: 1, zero_optimization: { stage: 3, zero_quantized_weights: true } }));
      const r = await runCli(['plan', '--deepspeed', file, '--model', 'llama2-7b', '--compute', 'model:h100', '--world', '8', '--lora', '8']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^as configured {2,}cannot run: --qwz with --lora or --freeze: it does not quantize frozen weights yet/m);
      expect(r.stdout).toMatch(/^zero_optimization\.stage 3 → \d {2,}(DP|ZeRO-\d) +[\d.]+ +yes /m);
    },
  );

  it('--emit-deepspeed needs a --deepspeed file to change', async () => {
    const r = await runCli(['plan', '--model', 'llama2-7b', '--compute', 'model:h100', '--world', '8', '--emit-deepspeed', '/tmp/x.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--emit-deepspeed: only with --deepspeed FILE');
  });

  it('weighs one key at a time, then pairs of different families, never editing the original', () => {
    const json = { zero_optimization: { stage: 3, zero_hpz_partition_size: 8 }, gradient_accumulation_steps: 2 };
    const all = jobCandidates(json, { world: 16, accumulate: 2, batch: 32, hidden: 4096, shardGroup: 8 });
    const toStage2 = all.find((c) => c.label === 'zero_optimization.stage 3 → 2')!;
    expect(withEdits(json, toStage2.edits)).toEqual({ zero_optimization: { stage: 2 }, gradient_accumulation_steps: 2 }); // hpZ goes with stage 3
    expect(json.zero_optimization.zero_hpz_partition_size).toBe(8);
    expect(all.some((c) => c.label.startsWith('zero_optimization.mics_shard_size 8'))).toBe(true);
    const pairs = all.filter((c) => c.size === 2);
    expect(pairs.length).toBeGreaterThan(0);
    for (const p of pairs) expect(p.label.split('; ').length).toBe(2);
    expect(all.filter((c) => c.family === 'accumulate').every((c) => c.flags.includes('--accumulate'))).toBe(true);
  });

  it('reads the file as DeepSpeed does (strings, field names) and edits a key under the name it was written', () => {
    // Qwen's published config writes the stage-3 prefetch as the string "0"; others write the field name
    const job = { world: 16, accumulate: 1, batch: 16, hidden: 4096, shardGroup: 8 };
    for (const z of [
      { stage: '3', stage3_prefetch_bucket_size: '0' },
      { stage: 3, prefetch_bucket_size: 0 },
    ]) {
      const json = { zero_optimization: z };
      const prefetch = jobCandidates(json, job).find((c) => c.label.startsWith('zero_optimization.stage3_prefetch_bucket_size 0 →'));
      expect(prefetch, JSON.stringify(z)).toBeDefined();
      const edited = withEdits(json, prefetch!.edits).zero_optimization as Record<string, unknown>;
      expect(Object.keys(edited)).toEqual(Object.keys(z)); // no second key beside the one written
    }
  });
});
