// The ring's arithmetic kernels (wasm/elementwise.wat) on a memory the caller owns: the fp32 add, and the bf16
// add (widen both, add in fp32, round to nearest even) of bf16 wire traffic. V8 does not vectorise the
// JavaScript loops (about 1 ns per element for an add, 4 ns for a bf16 add); these run four or eight lanes
// at once. Both are checked bit for bit against the JavaScript reference in the tests.
import { instantiate } from './wasm/load.js';
import { newMemory } from './wasm/memories.js';

/** Byte offsets into the memory and a count of elements: a multiple of 4 (8 for narrow). */
type Kernel = (dst: number, src: number, n: number) => void;
export interface SimdKernels {
  add: Kernel;
  addBf16: Kernel;
}

/** A fixed-size memory with the kernels bound to it, or null where WebAssembly SIMD (or the memory) is
 *  unavailable. Never grown: growing would detach every view handed out, some of them pending socket reads. */
export function simdMemory(bytes: number): { memory: Uint8Array; kernels: SimdKernels } | null {
  try {
    const memory = newMemory({ initial: Math.ceil(bytes / 65536) });
    const bound = instantiate<SimdKernels>('elementwise', memory);
    return bound && { memory: new Uint8Array(memory.buffer), kernels: bound.exports };
  } catch {
    return null; // the memory could not be had
  }
}

/** The plain loop, kept monomorphic (Float32Array only) so the JIT emits a tight loop. */
export function addLoop(acc: Float32Array, x: Float32Array, from: number, n: number): void {
  for (let i = from; i < n; i++) acc[i] += x[i];
}
