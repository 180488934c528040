// Reading part of a checkpoint shard, checked. A shard's header lists a SHA-256 for every BLOCK_BYTES of its
// data, and the index holds the SHA-256 of each header: a rank that reshards reads the header, checks it,
// and then reads and checks only the blocks that overlap what it needs (as DCP reads only the byte ranges
// a new shard overlaps). Whole-file checksums stay in the index for `checkpoint inspect` and same-layout
// resumes.
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';

export const BLOCK_BYTES = 1 << 20;
/** Blocks read per disk read: bounds the transient buffer however large a range is. */
const BLOCKS_PER_READ = 16;

const hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Where a safetensors file's data begins (after its 8-byte length and its JSON header). */
export function dataStart(buf: Uint8Array): number {
  return 8 + Number(new DataView(buf.buffer, buf.byteOffset, 8).getBigUint64(0, true));
}

/** The SHA-256 of every BLOCK_BYTES of `data` (the last block shorter), as one hex string. */
export function blockHashes(data: Uint8Array): string {
  let out = '';
  for (let at = 0; at < data.byteLength; at += BLOCK_BYTES) out += hex(data.subarray(at, at + BLOCK_BYTES));
  return out;
}

/** Elements [from, from + count) of F32 tensor `name` (of `length` elements), into out[at ...]. */
export interface RangeRequest {
  name: string;
  length: number;
  from: number;
  count: number;
  out: Float32Array;
  at: number;
}

interface TensorEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

export class ShardRanges {
  /** Bytes read from the file so far, header included. */
  bytesRead = 0;

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    private readonly base: number, // where the data starts
    private readonly dataBytes: number,
    private readonly tensors: Record<string, TensorEntry>,
    private readonly blocks: string[],
  ) {}

  /** Open a shard and check its header against `headerSha256` (from the index). */
  static async open(path: string, headerSha256: string): Promise<ShardRanges> {
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      throw new Error(`checkpoint ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
    }
    try {
      const size = (await fh.stat()).size;
      const len = Buffer.alloc(8);
      await fh.read(len, 0, 8, 0);
      const base = dataStart(len);
      if (base > size) throw new Error('its header length exceeds the file');
      const head = Buffer.alloc(base);
      await fh.read(head, 0, base, 0);
      if (hex(head) !== headerSha256) throw new Error('its header does not match the SHA-256 in index.json (changed or damaged since it was written)');
      const header = JSON.parse(head.subarray(8).toString('utf8')) as Record<string, unknown>;
      const meta = (header.__metadata__ ?? {}) as Record<string, string>;
      if (Number(meta.blockBytes) !== BLOCK_BYTES || typeof meta.blocks !== 'string') throw new Error('its header lists no block checksums');
      const blocks = meta.blocks.match(/.{64}/g) ?? [];
      if (blocks.length !== Math.ceil((size - base) / BLOCK_BYTES))
        throw new Error(`its data is ${size - base} bytes, not what its ${blocks.length} block checksums cover`);
      const reader = new ShardRanges(fh, path, base, size - base, header as Record<string, TensorEntry>, blocks);
      reader.bytesRead = base;
      return reader;
    } catch (err) {
      await fh.close();
      throw new Error(`checkpoint ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Fill every request from the file, reading each block they touch once and checking it. */
  async read(requests: RangeRequest[]): Promise<void> {
    const spans = requests.map((q) => {
      const t = this.tensors[q.name];
      if (!t || t.dtype !== 'F32' || t.data_offsets[1] - t.data_offsets[0] !== q.length * 4)
        throw new Error(`checkpoint ${this.path}: tensor ${q.name} should be F32 with ${q.length} values`);
      const start = t.data_offsets[0] + q.from * 4;
      return { start, end: start + q.count * 4, dest: new Uint8Array(q.out.buffer, q.out.byteOffset + q.at * 4, q.count * 4) };
    });
    const needed = new Set<number>();
    for (const { start, end } of spans) for (let b = Math.floor(start / BLOCK_BYTES); b * BLOCK_BYTES < end; b++) needed.add(b);
    const blocks = [...needed].sort((a, b) => a - b);
    // Runs of consecutive blocks, at most BLOCKS_PER_READ each: one disk read per run.
    for (let i = 0; i < blocks.length;) {
      let j = i + 1;
      while (j < blocks.length && blocks[j] === blocks[j - 1] + 1 && j - i < BLOCKS_PER_READ) j++;
      const lo = blocks[i] * BLOCK_BYTES;
      const hi = Math.min((blocks[j - 1] + 1) * BLOCK_BYTES, this.dataBytes);
      const buf = Buffer.allocUnsafe(hi - lo);
      const { bytesRead } = await this.fh.read(buf, 0, buf.byteLength, this.base + lo);
      this.bytesRead += bytesRead;
      if (bytesRead !== buf.byteLength) throw new Error(`checkpoint ${this.path}: shorter than its header says`);
      for (let b = blocks[i]; b <= blocks[j - 1]; b++) {
        const at = (b - blocks[i]) * BLOCK_BYTES;
        if (hex(buf.subarray(at, at + BLOCK_BYTES)) !== this.blocks[b])
          throw new Error(`checkpoint ${this.path}: data block ${b} does not match its SHA-256 (changed or damaged since it was written)`);
      }
      for (const { start, end, dest } of spans) {
        const from = Math.max(start, lo);
        const to = Math.min(end, hi);
        if (to > from) dest.set(buf.subarray(from - lo, to - lo), from - start);
      }
      i = j;
    }
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}
