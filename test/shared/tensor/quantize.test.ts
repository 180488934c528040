// Block quantization (tensor/quantize.ts on wasm/quantize.wat) against PyTorch's computation of the same scheme
// (test/helpers/torch_quant.py), bit for bit: scales, int8 codes, packed int4 codes and the values back, on odd
// lengths, a block of zeros, values near the fp32 limit, and seeded random vectors.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseSafetensors, serializeSafetensors, type StTensor } from '../../../shared/io/safetensors.js';
import { Quantizer, quantizedBytes, type QuantFormat } from '../../../shared/tensor/quantize.js';
import { requireTorch } from '../../helpers/torch.js';
import { decodeBf16, encodeBf16 } from '../../../shared/tensor/bf16.js';
import { seeded } from '../../helpers/seed.js';

const SCRIPT = fileURLToPath(new URL('../../helpers/torch_quant.py', import.meta.url));
const rnd = seeded();
const BLOCK = 32;

function inputs(): Map<string, Float32Array> {
  const normal = (n: number, s: number) => Float32Array.from({ length: n }, () => s * (rnd.int(2 ** 24) / 2 ** 23 - 1) * (rnd.int(4) === 0 ? 10 : 1));
  const zeros = normal(100, 1);
  zeros.fill(0, 32, 64); // the second block: all zeros
  const huge = normal(77, 3e38);
  huge[5] = 3.4028234e38;
  huge[40] = -3.4028234e38;
  return new Map([
    ['one', Float32Array.of(-0.5)],
    ['fifteen', normal(15, 1)],
    ['seventeen', normal(17, 1e-3)],
    ['odd', normal(1001, 1)],
    ['long', normal(4096 + 3, 0.02)],
    ['zeros', zeros],
    ['huge', huge],
  ]);
}

describe(`block quantization against PyTorch (seed ${rnd.seed})`, () => {
  it('int8 and int4: scales, codes, packed codes and the values back, bit for bit', (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-quant-'));
    try {
      const xs = inputs();
      const tensors = new Map<string, StTensor>([...xs].map(([k, x]) => [k, { dtype: 'F32', shape: [x.length], data: x }]));
      writeFileSync(join(dir, 'in.safetensors'), serializeSafetensors(tensors));
      requireTorch(ctx, 'the quantizer reference (test/helpers/torch_quant.py)');
      const py = spawnSync('/usr/bin/python3', [SCRIPT, join(dir, 'in.safetensors'), join(dir, 'out.safetensors'), String(BLOCK)], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(py.status, py.stderr).toBe(0);
      const ref = parseSafetensors(readFileSync(join(dir, 'out.safetensors')));
      const got = (k: string) => ref.get(k)!.data as Float32Array;
      const q = new Quantizer();
      for (const [name, x] of xs)
        for (const bits of [8, 4] as const) {
          const f: QuantFormat = { bits, block: BLOCK };
          const wire = new Uint8Array(quantizedBytes(x.length, f));
          q.quantize(x, f, wire);
          const nb = Math.ceil(x.length / BLOCK);
          const scales = new Float32Array(wire.slice(0, 4 * nb).buffer);
          const tag = `${name} int${bits}`;
          expect(Array.from(scales), `${tag} scales`).toEqual(Array.from(got(`${name}.${bits}.scales`)));
          const codes = wire.subarray(4 * nb, 4 * nb + (bits === 8 ? x.length : Math.ceil(x.length / 2)));
          if (bits === 8)
            expect(Array.from(new Int8Array(codes.buffer, codes.byteOffset, codes.length)), `${tag} codes`).toEqual(Array.from(got(`${name}.8.codes`)));
          else expect(Array.from(codes), `${tag} packed`).toEqual(Array.from(got(`${name}.4.packed`)));
          const back = new Float32Array(x.length);
          q.dequantize(wire, x.length, f, back);
          expect(Buffer.from(back.buffer).equals(Buffer.from(got(`${name}.${bits}.back`).buffer)), `${tag} values back`).toBe(true);
        }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bf16 in, bf16 out: the same codes as from fp32, values back rounded to nearest even; the error as a JavaScript count', () => {
    const q = new Quantizer();
    const x = inputs().get('odd')!;
    const bits = new Uint16Array(x.length);
    encodeBf16(x, bits);
    const wide = new Float32Array(x.length);
    decodeBf16(bits, wide);
    const f: QuantFormat = { bits: 8, block: BLOCK };
    const [a, b] = [new Uint8Array(quantizedBytes(x.length, f)), new Uint8Array(quantizedBytes(x.length, f))];
    const err = { sumErr: 0, sumAbs: 0, maxErr: 0, maxAbs: 0 };
    q.quantize(bits, f, a, err);
    q.quantize(wide, f, b);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const back = new Float32Array(x.length);
    q.dequantize(a, x.length, f, back);
    const backBits = new Uint16Array(x.length);
    q.dequantize(a, x.length, f, backBits);
    const rounded = new Uint16Array(x.length);
    encodeBf16(back, rounded);
    expect(Array.from(backBits)).toEqual(Array.from(rounded));
    let [sumErr, sumAbs, maxErr, maxAbs] = [0, 0, 0, 0];
    for (let i = 0; i < x.length; i++) {
      const e = Math.abs(back[i] - wide[i]);
      [sumErr, sumAbs] = [sumErr + e, sumAbs + Math.abs(wide[i])];
      [maxErr, maxAbs] = [Math.max(maxErr, e), Math.max(maxAbs, Math.abs(wide[i]))];
    }
    expect(err.maxErr).toBe(maxErr);
    expect(err.maxAbs).toBe(maxAbs);
    expect(err.sumErr).toBeCloseTo(sumErr, 3);
    expect(err.sumAbs).toBeCloseTo(sumAbs, 1);
  });

  it('a block of zeros gives scale 0 and codes 0; the wire size is scales + codes, in whole 16-bit units', () => {
    const q = new Quantizer();
    const x = new Float32Array(40);
    x[35] = 1;
    const f: QuantFormat = { bits: 4, block: 32 };
    const wire = new Uint8Array(quantizedBytes(40, f));
    expect(wire.length).toBe(2 * 4 + 20);
    q.quantize(x, f, wire);
    expect(Array.from(new Float32Array(wire.slice(0, 8).buffer))).toEqual([0, Math.fround(1 / 7)]);
    const back = new Float32Array(40);
    q.dequantize(wire, 40, f, back);
    expect(Array.from(back)).toEqual(Array.from(x));
    expect(quantizedBytes(33, { bits: 4, block: 32 })).toBe(2 * Math.ceil((8 + 17) / 2));
  });
});
