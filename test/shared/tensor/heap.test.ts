// Model states in a WebAssembly heap: blocks are handed out zeroed and reused, and the element-wise kernels
// that run on them agree with the JavaScript they replace: the bf16 narrowing bit for bit (PyTorch's
// vectors included), the widening exactly, Adam within fp32 rounding of the float64 loop.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeBf16, encodeBf16 } from '../../../shared/tensor/bf16.js';
import { fromF32, toF32 } from '../../../shared/tensor/convert.js';
import { heapOf, WasmHeap } from '../../../shared/tensor/heap.js';
import { MemoryLedger } from '../../../shared/tensor/memory-ledger.js';
import { parseSafetensors } from '../../../shared/io/safetensors.js';
import { adamUpdate } from '../../../shared/training/adam.js';
import { seeded } from '../../helpers/seed.js';

const random = seeded();
const vectors = parseSafetensors(readFileSync(new URL('../../fixtures/bf16_rne.safetensors', import.meta.url)));

/** fp32 values of every class: the PyTorch vectors (signed zeros, subnormals, ±inf, ±max, ties, NaN-free)
 *  plus NaNs and random bit patterns. */
function awkward(n: number): Float32Array {
  const out = new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  const torch = vectors.get('fp32')!.data as Float32Array;
  for (let i = 0; i < n; i++)
    bits[i] = i < torch.length ? new Uint32Array(torch.buffer, torch.byteOffset, torch.length)[i] : (random.int(2 ** 16) << 16) | random.int(2 ** 16);
  out[n - 1] = NaN;
  return out;
}

describe(`WebAssembly heap and its kernels (seed ${random.seed})`, () => {
  it('hands out zeroed, 16-byte aligned blocks, reuses freed ones, and says when it is full', () => {
    const heap = WasmHeap.create(1 << 16)!;
    const a = heap.take(100)!;
    new Uint8Array(heap.memory.buffer, a, 100).fill(7);
    heap.give(a, 100);
    expect(heap.take(100)).toBe(a);
    expect(new Uint8Array(heap.memory.buffer, a, 100).every((b) => b === 0)).toBe(true);
    expect(heap.take(17)! % 16).toBe(0);
    expect(heap.take(1 << 17)).toBeNull();
  });

  it('a ledger allocates in its heap while there is room, then in ordinary memory', () => {
    const ledger = new MemoryLedger(WasmHeap.create(1 << 16));
    const inHeap = ledger.allocF32('master', 1000);
    const outside = ledger.allocF32('m', 1 << 16);
    expect(heapOf(inHeap)).not.toBeNull();
    expect(heapOf(outside)).toBeNull();
    expect(ledger.live.master + ledger.live.m).toBe(4000 + (1 << 18));
    ledger.free(inHeap);
    expect(ledger.allocF32('v', 1000).byteOffset).toBe(inHeap.byteOffset);
  });

  it.each([1, 7, 8, 9, 1077, 4099])('%i values: fp32 -> bf16 bit for bit as the JavaScript rounding, and back exactly', (n) => {
    const ledger = new MemoryLedger(WasmHeap.create(1 << 20));
    const src = ledger.allocF32('master', n);
    src.set(awkward(n));
    const viaKernel = ledger.alloc('params16', 'bf16', n) as Uint16Array;
    fromF32(src, viaKernel);
    const viaJs = new Uint16Array(n);
    encodeBf16(src, viaJs);
    expect(Array.from(viaKernel)).toEqual(Array.from(viaJs));
    const back = toF32(viaKernel, ledger.allocF32('grads', n));
    const backJs = new Float32Array(n);
    decodeBf16(viaJs, backJs);
    expect(Array.from(new Uint32Array(back.buffer, back.byteOffset, n))).toEqual(Array.from(new Uint32Array(backJs.buffer)));
  });

  it.each([1, 5, 1000])('%i parameters: three Adam steps in the heap match the JavaScript update within fp32 rounding', (n) => {
    const ledger = new MemoryLedger(WasmHeap.create(1 << 20));
    const [p, m, v, g] = ['master', 'm', 'v', 'grads'].map((b) => ledger.allocF32(b as 'master', n));
    const [pj, mj, vj] = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
    for (let i = 0; i < n; i++) p[i] = pj[i] = random.int(2001) / 1000 - 1;
    const hyper = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8 };
    for (let t = 1; t <= 3; t++) {
      for (let i = 0; i < n; i++) g[i] = random.int(2001) / 1000 - 1;
      adamUpdate(p, m, v, g, t, hyper);
      adamUpdate(pj, mj, vj, Float32Array.from(g), t, hyper);
    }
    expect(heapOf(p, m, v, g), 'the update ran in the heap').not.toBeNull();
    for (let i = 0; i < n; i++) expect(Math.abs(p[i] - pj[i])).toBeLessThanOrEqual(1e-6);
  });
});
