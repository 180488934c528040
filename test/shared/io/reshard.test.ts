// Resharding at load: a ZeRO-3 world-4 checkpoint read as DP at world 2, saved, and read back as ZeRO-3 at
// world 4 is byte for byte the checkpoint it started from, in master, m, v and step. Each rank reads only the
// blocks of the shards its new layout overlaps, and each block it reads is checked.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { latestIndex, writeIndex, writeRankShard } from '../../../shared/io/checkpoint.js';
import { consolidate, readFullState, readStateFor, stateFor } from '../../../shared/io/reshard.js';
import { BLOCK_BYTES } from '../../../shared/io/shard-blocks.js';
import { ShardLayout } from '../../../shared/training/layout.js';
import { modelSpec } from '../../../shared/models/registry.js';
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
async function write(
  dir: string,
  scheme: SchemeName,
  world: number,
  sharded: boolean,
  state: Parameters<typeof stateFor>[0],
  s = spec,
  c = config,
): Promise<string[]> {
  const states = Array.from({ length: world }, (_, r) => stateFor(state, new ShardLayout(s, world, r, 'layer'), sharded));
  return writeStates(dir, scheme, world, states, c);
}

/** Write a complete checkpoint whose rank r holds states[r] (as a rank would, with block checksums). */
async function writeStates(dir: string, scheme: SchemeName, world: number, states: Parameters<typeof writeRankShard>[4][], c = config): Promise<string[]> {
  const written = [];
  for (let r = 0; r < world; r++) written.push(await writeRankShard(dir, scheme, r, world, states[r]));
  await writeIndex(
    dir,
    c,
    world,
    scheme,
    states[0].step,
    written.map((w) => w.sha256),
    written.map((w) => w.headerSha256),
  );
  return written.map((w) => w.path);
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

  it('reading by ranges: ZeRO-3 w4 -> DP w2 -> ZeRO-3 w4, every rank reading only its overlap, gives back the same bytes', async () => {
    const rng = new Rng(seed + 2);
    const vec = () => Float32Array.from({ length: spec.params }, () => rng.normal());
    const original = { master: vec(), m: vec(), v: vec().map(Math.abs), step: 9 };
    const first = await write(join(root, 'ra'), 'zero3', 4, true, original);
    const indexA = (await latestIndex(join(root, 'ra'), 'zero3')).index!;
    expect(indexA.headerSha256).toHaveLength(4);
    const dp = await Promise.all([0, 1].map(async (r) => (await readStateFor(join(root, 'ra'), indexA, new ShardLayout(spec, 2, r, 'layer'), false)).state));
    await writeStates(join(root, 'rb'), 'dp', 2, dp);
    const indexB = (await latestIndex(join(root, 'rb'), 'dp')).index!;
    const back = await Promise.all(
      [0, 1, 2, 3].map(async (r) => (await readStateFor(join(root, 'rb'), indexB, new ShardLayout(spec, 4, r, 'layer'), true)).state),
    );
    const again = await writeStates(join(root, 'rc'), 'zero3', 4, back);
    for (let r = 0; r < 4; r++) expect(readFileSync(again[r]).equals(readFileSync(first[r])), `rank ${r}`).toBe(true);
  });

  it('a rank reads only the blocks its shard overlaps, and a damaged block or header it reads is refused naming the file', async () => {
    const big = '512,1024,1024,512'; // 1.6 M parameters: each ZeRO-3 w4 shard file is ~4.7 MiB, several blocks
    const bigConfig = smallConfig({ model: big, batch: 12 });
    const bigSpec = modelSpec(bigConfig);
    const rng = new Rng(seed + 3);
    const vec = () => Float32Array.from({ length: bigSpec.params }, () => rng.normal());
    const original = { master: vec(), m: vec(), v: vec().map(Math.abs), step: 3 };
    const dir = join(root, 'big');
    const files = await write(dir, 'zero3', 4, true, original, bigSpec, bigConfig);
    const total = files.reduce((t, f) => t + statSync(f).size, 0);
    expect(statSync(files[0]).size).toBeGreaterThan(4 * BLOCK_BYTES);
    const index = (await latestIndex(dir, 'zero3')).index!;
    const readAs = (world: number, rank: number, sharded: boolean) => readStateFor(dir, index, new ShardLayout(bigSpec, world, rank, 'layer'), sharded);
    const want = (world: number, rank: number, sharded: boolean) => stateFor(original, new ShardLayout(bigSpec, world, rank, 'layer'), sharded);
    const lines: string[] = [];
    for (const [world, rank, sharded, most] of [
      [2, 0, true, 0.55], // ZeRO-3 w2 rank 0: old ranks 0 and 1, whole; 2 and 3 never opened
      [3, 1, true, 0.52], // ZeRO-2 w3 rank 1: the middle third of every unit, block by block
      [2, 1, false, 1.01], // DP: everything
    ] as const) {
      const { state, bytesRead } = await readAs(world, rank, sharded);
      expect(state).toEqual(want(world, rank, sharded));
      lines.push(`w${world} r${rank} ${sharded ? 'shard' : 'DP'}: ${((100 * bytesRead) / total).toFixed(1)}% of the checkpoint's bytes`);
      expect(bytesRead).toBeLessThanOrEqual(most * total);
    }
    console.log(`bytes read when resharding a ZeRO-3 w4 checkpoint (seed ${seed}): ${lines.join('; ')}`);
    // Damage a byte of old rank 2's data (what ZeRO-2 w3 rank 1 reads), then its header.
    const bytes = readFileSync(files[2]);
    const base = 8 + Number(bytes.readBigUInt64LE(0));
    bytes[base + 10] ^= 0x40;
    writeFileSync(files[2], bytes);
    await expect(readAs(3, 1, true)).rejects.toThrow(/rank-00002\.safetensors: data block 0 does not match its SHA-256/);
    await expect(readAs(2, 0, true)).resolves.toBeDefined(); // rank 2's file is none of its business
    bytes[base + 10] ^= 0x40;
    bytes[20] ^= 0x01;
    writeFileSync(files[2], bytes);
    await expect(readAs(3, 1, true)).rejects.toThrow(/rank-00002\.safetensors: its header does not match the SHA-256 in index\.json/);
  });
});
