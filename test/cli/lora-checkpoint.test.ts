// A LoRA run's checkpoints hold what trains (the adapters), resume to exactly the uninterrupted run's weights,
// reshard across schemes, and consolidate to the adapters alone under PEFT's names.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSafetensors } from '../../shared/io/safetensors.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'zerowire-lora-ckpt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (scheme: string, steps: number, ...extra: string[]) =>
  runCli(
    [
      'local',
      '--world',
      '2',
      '--scheme',
      scheme,
      '--model',
      'gpt:2,32,2,16,32',
      '--lora',
      '4,8',
      '--steps',
      String(steps),
      '--batch',
      '4',
      '--samples',
      '32',
      '--lr',
      '0.01',
      '--wire-dtype',
      'fp32',
      '--preflight',
      'off',
      ...extra,
    ],
    60_000,
  );
const tensors = (path: string) => parseSafetensors(readFileSync(path));

describe('LoRA checkpoints', () => {
  it('zero3 at step 2 resumes as zero3 and as DP to the uninterrupted weights; consolidate gives the adapters by PEFT name', async () => {
    const ck = join(dir, 'ck');
    const whole = await run('zero3', 4, '--dump', join(dir, 'whole'), '--checkpoint-every', '4', '--checkpoint-dir', ck);
    expect(whole.code, whole.stderr).toBe(0);
    const half = join(dir, 'half'); // the same run's first two steps, checkpointed at step 2
    expect((await run('zero3', 2, '--checkpoint-every', '2', '--checkpoint-dir', half)).code).toBe(0);
    const out = join(dir, 'adapters.safetensors');
    const c = await runCli(['consolidate', '--dir', ck, '--scheme', 'zero3', '--out', out]);
    expect(c.code, c.stderr).toBe(0);
    const adapters = tensors(out);
    const final = tensors(join(dir, 'whole', 'final-zero3.safetensors'));
    expect([...adapters.keys()].sort()).toEqual([...final.keys()].filter((n) => n.includes('.lora_')).sort());
    expect(adapters.has('h.0.attn.qkv.lora_A.weight') && adapters.has('h.1.mlp.proj.lora_B.weight')).toBe(true);
    for (const [name, t] of adapters) expect(Array.from(t.data as Float32Array), name).toEqual(Array.from(final.get(name)!.data as Float32Array));

    for (const scheme of ['zero3', 'dp']) {
      const resumed = await run(scheme, 4, '--resume', half, '--dump', join(dir, `resumed-${scheme}`));
      expect(resumed.code, resumed.stderr).toBe(0);
      const got = tensors(join(dir, `resumed-${scheme}`, `final-${scheme}.safetensors`));
      for (const [name, t] of final) expect(Array.from(got.get(name)!.data as Float32Array), `${scheme} ${name}`).toEqual(Array.from(t.data as Float32Array));
    }
  }, 120_000);

  it('refuses to resume a LoRA checkpoint into a run without the same adapters', async () => {
    const ck = join(dir, 'ck2');
    expect((await run('dp', 2, '--checkpoint-every', '2', '--checkpoint-dir', ck)).code).toBe(0);
    const r = await runCli(
      ['local', '--world', '2', '--scheme', 'dp', '--model', 'gpt:2,32,2,16,32', '--steps', '4', '--batch', '4', '--samples', '32', '--resume', ck],
      60_000,
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/fine-tuning .*lora.* vs "none"/);
  }, 60_000);
});
