// Reading and writing the safetensors format: u64 LE header length, JSON header, raw little-endian data.
import { randomBytes } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';

type StDtype = 'F64' | 'F32' | 'BF16' | 'I64' | 'U16' | 'I32' | 'U8';
type StData = Float64Array | Float32Array | Uint16Array | BigInt64Array | Int32Array | Uint8Array;

export interface StTensor {
  dtype: StDtype;
  shape: number[];
  data: StData;
}

const ELEMENT_BYTES: Record<StDtype, number> = { F64: 8, F32: 4, BF16: 2, U16: 2, I64: 8, I32: 4, U8: 1 };

function view(dtype: StDtype, bytes: Uint8Array): StData {
  // Copy into a fresh, aligned buffer: the header length rarely leaves the data aligned.
  const own = Uint8Array.prototype.slice.call(bytes); // Buffer#slice would share memory
  const n = own.byteLength / ELEMENT_BYTES[dtype];
  switch (dtype) {
    case 'F64':
      return new Float64Array(own.buffer, 0, n);
    case 'F32':
      return new Float32Array(own.buffer, 0, n);
    case 'BF16':
    case 'U16':
      return new Uint16Array(own.buffer, 0, n);
    case 'I64':
      return new BigInt64Array(own.buffer, 0, n);
    case 'I32':
      return new Int32Array(own.buffer, 0, n);
    case 'U8':
      return own;
  }
}

export function parseSafetensors(buf: Uint8Array): Map<string, StTensor> {
  if (buf.byteLength < 8) throw new Error('safetensors: file shorter than its 8-byte header length');
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const headerLen = Number(dv.getBigUint64(0, true));
  if (8 + headerLen > buf.byteLength) throw new Error(`safetensors: header length ${headerLen} exceeds the file`);
  const header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + headerLen))) as Record<string, unknown>;
  const base = 8 + headerLen;
  const out = new Map<string, StTensor>();
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const t = raw as { dtype: StDtype; shape: number[]; data_offsets: [number, number] };
    if (!(t.dtype in ELEMENT_BYTES)) throw new Error(`safetensors: tensor ${name} has unsupported dtype ${t.dtype}`);
    const [a, b] = t.data_offsets;
    if (base + b > buf.byteLength || a > b) throw new Error(`safetensors: tensor ${name} lies outside the file`);
    out.set(name, { dtype: t.dtype, shape: t.shape, data: view(t.dtype, buf.subarray(base + a, base + b)) });
  }
  return out;
}

export function serializeSafetensors(tensors: Map<string, StTensor>, metadata?: Record<string, string>): Buffer {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const n = t.data.byteLength;
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + n] };
    offset += n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8); // keep the data 8-byte aligned
  const headerBytes = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(8 + headerBytes.byteLength + offset);
  out.writeBigUInt64LE(BigInt(headerBytes.byteLength), 0);
  headerBytes.copy(out, 8);
  let at = 8 + headerBytes.byteLength;
  for (const t of tensors.values()) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += t.data.byteLength;
  }
  return out;
}

/** Write a file so that readers see either the old file or the complete new one, never half of it. */
export async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}
