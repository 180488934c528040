// Model states in WebAssembly memory, so that the element-wise kernels (wasm/elementwise.wat: Adam, bf16
// <-> fp32) run on them in place. A heap is one fixed memory, sized when a scheme is set up from what its
// bands will hold; it never grows (growing would detach every view handed out). Blocks that are freed are
// kept by size and handed out again (zeroed), as the transient bands come and go each step. What does not
// fit is left to ordinary typed arrays, and the callers of the kernels fall back to JavaScript loops.
import { instantiate } from './wasm/load.js';
import { newMemory } from './wasm/memories.js';

const PAGE = 65536;
const ALIGN = 16;

interface ElementwiseKernels {
  add(dst: number, src: number, n: number): void;
  narrow_bf16(src: number, dst: number, n: number): void;
  widen_bf16(src: number, dst: number, n: number): void;
  adam(
    p: number,
    m: number,
    v: number,
    g: number,
    n: number,
    beta1: number,
    rest1: number,
    beta2: number,
    rest2: number,
    step: number,
    bc2: number,
    eps: number,
  ): void;
}

/** Which heap (if any) a buffer belongs to: how the kernels' callers find them. */
const heaps = new WeakMap<ArrayBufferLike, WasmHeap>();

export class WasmHeap {
  readonly memory: WebAssembly.Memory;
  readonly k: ElementwiseKernels;
  private next = 0;
  private inUse = 0; // bytes handed out and not given back
  private readonly freed = new Map<number, number[]>(); // block bytes -> offsets

  private constructor(memory: WebAssembly.Memory, k: ElementwiseKernels) {
    this.memory = memory;
    this.k = k;
    heaps.set(memory.buffer, this);
  }

  /** A heap of `bytes`, or null where WebAssembly SIMD (or that much memory) is not to be had. */
  static create(bytes: number): WasmHeap | null {
    try {
      const memory = newMemory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
      const bound = instantiate<ElementwiseKernels>('elementwise', memory);
      return bound && new WasmHeap(memory, bound.exports);
    } catch {
      return null;
    }
  }

  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Bytes of the heap not handed out: never used yet, or freed and kept for reuse. */
  get idleBytes(): number {
    return this.memory.buffer.byteLength - this.inUse;
  }

  /** A zeroed block of `bytes`, as a byte offset, or null when the heap is full. */
  take(bytes: number): number | null {
    const size = Math.ceil(bytes / ALIGN) * ALIGN;
    const reused = this.freed.get(size)?.pop();
    if (reused !== undefined) {
      new Uint8Array(this.memory.buffer, reused, size).fill(0);
      this.inUse += size;
      return reused;
    }
    if (this.next + size > this.memory.buffer.byteLength) return null;
    const at = this.next;
    this.next += size;
    this.inUse += size;
    return at;
  }

  /** Give back a block that take() handed out. */
  give(at: number, bytes: number): void {
    const size = Math.ceil(bytes / ALIGN) * ALIGN;
    const list = this.freed.get(size) ?? [];
    list.push(at);
    this.freed.set(size, list);
    this.inUse -= size;
  }
}

/** The heap all of `arrays` live in, or null when they are not all in one. */
export function heapOf(...arrays: ArrayBufferView[]): WasmHeap | null {
  const h = heaps.get(arrays[0].buffer);
  return h && arrays.every((a) => a.buffer === arrays[0].buffer) ? h : null;
}
