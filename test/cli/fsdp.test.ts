// --fsdp: an accelerate FSDP config (YAML) read as zerowire's options, every key printed with what it became,
// bad values refused naming the file and the key (the line and column where YAML breaks).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readFsdpConfig, withFsdp } from '../../cli/fsdp.js';
import { runCli } from '../helpers/cli.js';

const FILE = 'deploy/accelerate/fsdp_hybrid.yaml';
const HYBRID = parse(readFileSync(new URL(`../../${FILE}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const none = () => false;

describe('--fsdp', () => {
  it('maps HYBRID_SHARD, the prefetch, checkpointing and precision; every key accounted for', () => {
    const { set, rows } = readFsdpConfig(HYBRID, FILE, 16, none);
    expect(set).toEqual({ scheme: 'dp,hsdp', gatherAhead: 1, recompute: false, wireDtype: 'bf16' });
    const fsdp = HYBRID.fsdp_config as Record<string, unknown>;
    const keys = [...Object.keys(HYBRID).filter((k) => k !== 'fsdp_config'), ...Object.keys(fsdp).map((k) => `fsdp_config.${k}`)];
    for (const key of keys)
      expect(
        rows.some((r) => r.key === key),
        key,
      ).toBe(true);
    expect(rows.find((r) => r.key === 'fsdp_config.fsdp_offload_params')?.became).toBe('left aside: not offloaded');
    const offloaded = readFsdpConfig({ ...HYBRID, fsdp_config: { ...fsdp, fsdp_offload_params: true } }, FILE, 16, none);
    expect(offloaded.set).toMatchObject({ scheme: 'hsdp', offload: 'optimizer,params' });
    const other = readFsdpConfig({ ...HYBRID, fsdp_config: { ...fsdp, fsdp_sharding_strategy: 2, fsdp_activation_checkpointing: true } }, FILE, 16, none);
    expect(other.set).toMatchObject({ scheme: 'dp,zero2', recompute: true });
    expect(readFsdpConfig({ ...HYBRID, flux: 1 }, FILE, 16, none).rows.find((r) => r.key === 'flux')?.became).toBe('left aside: not understood');
    // older accelerate releases wrote the prefetch as fsdp_backward_prefetch_policy
    const { fsdp_backward_prefetch: _p, ...rest } = fsdp;
    const older = readFsdpConfig({ ...HYBRID, fsdp_config: { ...rest, fsdp_backward_prefetch_policy: 'NO_PREFETCH' } }, FILE, 16, none);
    expect(older.set).toMatchObject({ gatherAhead: 0 });
  });

  it('refuses what it cannot read, naming the file and the key', () => {
    const bad =
      (o: Record<string, unknown>, world = 16) =>
      () =>
        readFsdpConfig({ ...HYBRID, ...o }, 'f.yaml', world, none);
    expect(bad({ fsdp_config: { fsdp_sharding_strategy: 'HALF_SHARD' } })).toThrow(
      /^--fsdp f.yaml: key "fsdp_config.fsdp_sharding_strategy": FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD, got "HALF_SHARD"$/,
    );
    expect(bad({ distributed_type: 'DEEPSPEED' })).toThrow(/^--fsdp f.yaml: key "distributed_type": FSDP, got "DEEPSPEED"$/);
    expect(bad({}, 8)).toThrow(/^--fsdp f.yaml: num_processes 16 and the world of 8 ranks disagree/);
    expect(bad({ mixed_precision: 'fp8' })).toThrow(/key "mixed_precision": bf16, fp16 or no/);
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-fsdp-'));
    try {
      writeFileSync(join(dir, 'c.yaml'), 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: [FULL_SHARD\n');
      expect(() => withFsdp({ fsdp: join(dir, 'c.yaml') }, 16)).toThrow(/^--fsdp .*c.yaml: not YAML \(line \d+, column \d+: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('plan prints the table, with the hostfile giving the nodes', async () => {
    const r = await runCli(['plan', '--fsdp', FILE, '--hostfile', 'deploy/hostfile.example', '--model', 'llama3-8b', '--compute', 'model:a800'], 30_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/fsdp_config\.fsdp_sharding_strategy +"HYBRID_SHARD" +--scheme dp,hsdp \(HSDP: ZeRO-3 within a node/);
    expect(r.stdout).toMatch(/^HSDP /m);
  }, 60_000);
});
