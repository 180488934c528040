// Resharding at load: a ZeRO-3 world-4 checkpoint read as DP at world 2, saved, and read back as ZeRO-3 at
// world 4 is byte for byte the checkpoint it started from, in master, m, v and step.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { latestIndex, writeIndex, writeRankShard } from '../../../shared/io/checkpoint.js';
import { consolidate, readFullState, stateFor } from '../../../shared/io/reshard.js';
import { ShardLayout } from '../../../shared/training/layout.js';
import { modelSpec } from '../../../shared/training/model.js';
import { Rng } from '../../../shared/training/rng.js';
import type { SchemeName } from '../../../shared/control/run-config.js';
import { smallConfig } from '../../helpers/config.js';
import { seeded } from '../../helpers/seed.js';

const { seed } = seeded();
const root = mkdtempSync(join(tmpdir(), 'zerowire-reshard-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const MODEL = '24,61,33,7'; // no layer divisible by 4 or 3: every unit padded
const config = smallConfig({ model: MODEL, batch: 12 });
const spec = modelSpec(config);

/** Write a complete checkpoint of `scheme` at `world` whose ranks hold `state` cut to their layouts. */
async function write(dir: string, scheme: SchemeName, world: number, sharded: boolean, state: Parameters<typeof stateFor>[0]): Promise<string[]> {
  const sums: string[] = [];
  const paths: string[] = [];
  for (let r = 0; r < world; r++) {
    const w = await writeRankShard(dir, scheme, r, world, stateFor(state, new ShardLayout(spec, world, r, 'layer'), sharded));
    sums.push(w.sha256);
    paths.push(w.path);
  }
  await writeIndex(dir, config, world, scheme, state.step, sums);
  return paths;
}

describe(`resharding (seed ${seed})`, () => {
  it('ZeRO-3 world 4 -> DP world 2 -> ZeRO-3 world 4 gives back the same bytes', async () => {
    const rng = new Rng(seed);
    const vec = () => Float32Array.from({ length: spec.params }, () => rng.normal());
    const original = { master: vec(), m: vec(), v: vec().map(Math.abs), step: 7 };
    const first = await write(join(root, 'a'), 'zero3', 4, true, original);

    const fromZero3 = await readFullState(join(root, 'a'), (await latestIndex(join(root, 'a'), 'zero3')).index!);
    expect(fromZero3).toEqual(original);
    await write(join(root, 'b'), 'dp', 2, false, fromZero3);
    const fromDp = await readFullState(join(root, 'b'), (await latestIndex(join(root, 'b'), 'dp')).index!);
    const back = await write(join(root, 'c'), 'zero3', 4, true, fromDp);

    for (let r = 0; r < 4; r++) expect(readFileSync(back[r]).equals(readFileSync(first[r])), `rank ${r}`).toBe(true);
  });

  it("reads an HSDP checkpoint's first group as the model (its index records the group), and refuses one that does not", async () => {
    const rng = new Rng(seed + 1);
    const vec = () => Float32Array.from({ length: spec.params }, () => rng.normal());
    const original = { master: vec(), m: vec(), v: vec().map(Math.abs), step: 5 };
    const dir = join(root, 'hsdp');
    const sums: string[] = [];
    for (let r = 0; r < 4; r++) {
      const layout = new ShardLayout(spec, 2, r % 2, 'layer'); // groups of 2: ranks 2 and 3 replicate 0 and 1
      sums.push((await writeRankShard(dir, 'hsdp', r, 4, stateFor(original, layout, true))).sha256);
    }
    await writeIndex(dir, smallConfig({ model: MODEL, batch: 12, shardGroup: 2 }), 4, 'hsdp', 5, sums);
    const index = (await latestIndex(dir, 'hsdp')).index!;
    expect(index.shardGroup).toBe(2);
    expect(await readFullState(dir, index)).toEqual(original);
    expect((await consolidate(dir, index)).size).toBeGreaterThan(0);
    await expect(readFullState(dir, { ...index, shardGroup: undefined })).rejects.toThrow(/does not record the shard group/);
  });
});
