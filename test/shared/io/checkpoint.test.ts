// Checkpoint files that were damaged or edited: every case is refused with the file named, or resumes
// exactly. Seeded random trials of bit flips, truncations and swapped tensor offsets, and broken indexes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { latestIndex, readRankShard, writeIndex, writeRankShard } from '../../../shared/io/checkpoint.js';
import { smallConfig } from '../../helpers/config.js';
import { seeded } from '../../helpers/seed.js';

const random = seeded();
const root = mkdtempSync(join(tmpdir(), 'zerowire-ckpt-fuzz-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const config = smallConfig({ model: '5,7,3', scheme: 'zero1', batch: 4 });
const N = 40; // values per shard
const shard = (rank: number, seed: number) => Float32Array.from({ length: N }, (_, i) => Math.sin(i + rank * 100 + seed));

/** A complete step-2 checkpoint of zero1 on 2 ranks in a fresh folder. */
async function checkpoint(trial: number): Promise<{ dir: string; files: string[]; index: string }> {
  const dir = join(root, `t${trial}`);
  const written = [];
  for (const rank of [0, 1])
    written.push(await writeRankShard(dir, 'zero1', rank, 2, { master: shard(rank, 1), m: shard(rank, 2), v: shard(rank, 3), step: 2 }));
  const index = await writeIndex(
    dir,
    config,
    2,
    'zero1',
    2,
    written.map((w) => w.sha256),
  );
  return { dir, files: written.map((w) => w.path), index };
}

/** The same file with two tensors' data offsets traded in its header (same header length: it still parses). */
function swapOffsets(bytes: Buffer, a: string, b: string): Buffer {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  [header[a].data_offsets, header[b].data_offsets] = [header[b].data_offsets, header[a].data_offsets];
  const text = JSON.stringify(header).padEnd(n, ' ');
  expect(text.length).toBe(n);
  return Buffer.concat([bytes.subarray(0, 8), Buffer.from(text, 'utf8'), bytes.subarray(8 + n)]);
}

async function resume(dir: string) {
  const { index } = await latestIndex(dir, 'zero1');
  return Promise.all([0, 1].map((r) => readRankShard(dir, index!, r, N)));
}

describe(`damaged checkpoints (seed ${random.seed})`, () => {
  it('an intact checkpoint resumes exactly', async () => {
    const { dir } = await checkpoint(0);
    const [a, b] = await resume(dir);
    expect(Array.from(a.master)).toEqual(Array.from(shard(0, 1)));
    expect(Array.from(b.v)).toEqual(Array.from(shard(1, 3)));
  });

  const kinds = ['flip a bit', 'truncate', 'swap two tensors'] as const;
  for (let trial = 1; trial <= 24; trial++) {
    const kind = kinds[trial % 3];
    const rank = random.int(2);
    const at = random.int(10_000);
    it(`trial ${trial}: ${kind} in rank ${rank}'s shard is refused, naming the file`, async () => {
      const { dir, files } = await checkpoint(trial);
      const file = files[rank];
      const bytes = readFileSync(file);
      if (kind === 'flip a bit') {
        bytes[at % bytes.length] ^= 1 << (at % 8);
        writeFileSync(file, bytes);
      } else if (kind === 'truncate') writeFileSync(file, bytes.subarray(0, at % bytes.length));
      else writeFileSync(file, swapOffsets(bytes, 'master', 'v'));
      await expect(resume(dir)).rejects.toThrow(new RegExp(`checkpoint ${file.replace(/[/.]/g, '\\$&')}: `));
    });
  }

  it.each([
    ['garbage', 'this is not json', /checkpoint index .*index\.json: not JSON/],
    ['an empty object', '{}', /checkpoint index .*index\.json: field "format"/],
    ['a checksum missing', null, /checkpoint index .*index\.json: 1 files and 1 checksums for a world of 2|field "sha256/],
  ])('an index that is %s is refused naming it, not passed over for an older checkpoint', async (_, content, message) => {
    const { dir, index } = await checkpoint(100 + random.int(1000));
    // An older, intact checkpoint in the same folder: the broken newer index must not quietly fall back to it.
    const older = [];
    for (const rank of [0, 1])
      older.push(await writeRankShard(dir, 'zero1', rank, 2, { master: shard(rank, 1), m: shard(rank, 2), v: shard(rank, 3), step: 1 }));
    await writeIndex(
      dir,
      config,
      2,
      'zero1',
      1,
      older.map((w) => w.sha256),
    );
    const json = JSON.parse(readFileSync(index, 'utf8'));
    writeFileSync(index, content ?? JSON.stringify({ ...json, files: json.files.slice(0, 1), sha256: json.sha256.slice(0, 1) }));
    await expect(latestIndex(dir, 'zero1')).rejects.toThrow(message);
  });

  it('a newer step folder without an index (a run stopped while writing it) is passed over, and said so', async () => {
    const { dir } = await checkpoint(3000);
    mkdirSync(join(dir, 'zero1', 'step-00000009'), { recursive: true });
    writeFileSync(join(dir, 'zero1', 'step-00000009', 'rank-00000.safetensors'), 'half');
    const { index, incomplete } = await latestIndex(dir, 'zero1');
    expect(index!.step).toBe(2);
    expect(incomplete).toEqual(['step-00000009']);
  });
});
