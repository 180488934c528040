// Receive buffers of one link, reused across chunks and collectives, and the arithmetic reduce-scatter runs
// on them. A fresh 1 MiB ArrayBuffer per chunk costs an mmap, 256 page faults and a later GC; a reused one
// costs nothing. The buffers are carved from a fixed WebAssembly memory, so the SIMD kernels (simd-kernels.ts)
// work on a received chunk in place: only operands from elsewhere are staged into that memory, in slices.
import { fromBf16, toBf16 } from '../tensor/bf16.js';
import { addLoop, simdMemory, type SimdKernels } from '../tensor/simd-kernels.js';

/** Bytes per staging slice (two of them: both stay in L2 next to the streamed data). */
const SLICE_BYTES = 64 * 1024;
/** Elements per staged step: a slice of fp32, or of bf16, fills one staging slice. */
const STEP = SLICE_BYTES / 4;
const STEP_BF16 = SLICE_BYTES / 2;
const ALIGN = 16;

interface Arena {
  memory: Uint8Array;
  k: SimdKernels;
  a: number; // byte offset of staging slice a
  b: number; // ... and of slice b
  next: number; // bump pointer of the buffer region
}

export class BufferPool {
  private readonly free = new Map<number, Uint8Array[]>();
  private readonly mine = new WeakSet<Uint8Array>(); // buffers take() made
  private readonly idle = new WeakSet<Uint8Array>(); // ... and that are in the free lists
  private arena: Arena | null | undefined; // undefined: not made yet; null: unavailable
  private retained = 0; // idle bytes outside the arena

  /** `capacityBytes` bounds the arena, and separately what idle buffers outside it may hold. */
  constructor(private readonly capacityBytes: number) {}

  take(bytes: number): Uint8Array {
    const reused = this.free.get(bytes)?.pop();
    if (reused) {
      this.idle.delete(reused);
      if (!this.inArena(reused)) this.retained -= bytes;
      return reused;
    }
    const arena = this.getArena();
    const size = Math.ceil(bytes / ALIGN) * ALIGN;
    let fresh: Uint8Array;
    if (arena && arena.next + size <= arena.memory.byteLength) {
      fresh = arena.memory.subarray(arena.next, arena.next + bytes);
      arena.next += size;
    } else fresh = new Uint8Array(bytes); // the arena is full (or unavailable)
    this.mine.add(fresh);
    return fresh;
  }

  /** Bytes this pool holds whether or not they are in use: its arena, and idle buffers kept outside it. */
  get reservedBytes(): number {
    return (this.arena ? this.arena.memory.byteLength : 0) + this.retained;
  }

  /** Return a buffer that take() gave out; anything else is ignored, so callers need not track origins. */
  give(b: Uint8Array): void {
    if (!this.mine.has(b) || this.idle.has(b)) return;
    if (!this.inArena(b)) {
      if (this.retained + b.byteLength > this.capacityBytes) return; // left to the GC
      this.retained += b.byteLength;
    }
    const list = this.free.get(b.byteLength) ?? [];
    list.push(b);
    this.free.set(b.byteLength, list);
    this.idle.add(b);
  }

  /** acc[i] += x[i] for i < n: in place with SIMD when `acc` is one of this pool's buffers, staged through
   *  the arena otherwise, and the plain loop where WebAssembly SIMD is unavailable. */
  addInto(acc: Float32Array, x: Float32Array, n: number): void {
    const arena = this.getArena();
    if (!arena) return addLoop(acc, x, 0, n);
    const whole = n - (n % 4);
    for (let at = 0; at < whole; at += STEP) {
      const len = Math.min(STEP, whole - at);
      this.f32(arena.b, len).set(x.subarray(at, at + len));
      this.viaArena(arena, acc.subarray(at, at + len), (dst) => arena.k.add(dst, arena.b, len));
    }
    addLoop(acc, x, whole, n);
  }

  /** acc[i] = bf16(fp32(acc[i]) + fp32(x[i])) for bf16 bits, i < n: the sum in fp32, rounded once to nearest
   *  even (one hop of a bf16 reduce-scatter). In place with SIMD when `acc` is one of this pool's buffers. */
  addBf16Into(acc: Uint16Array, x: Uint16Array, n: number): void {
    const arena = this.getArena();
    const whole = arena ? n - (n % 8) : 0;
    for (let at = 0; at < whole; at += STEP_BF16) {
      const len = Math.min(STEP_BF16, whole - at);
      this.u16(arena!.b, len).set(x.subarray(at, at + len));
      this.viaArena(arena!, acc.subarray(at, at + len), (dst) => arena!.k.addBf16(dst, arena!.b, len));
    }
    for (let i = whole; i < n; i++) acc[i] = toBf16(fromBf16(acc[i]) + fromBf16(x[i]));
  }

  /** Run `fn` on `acc`'s bytes in the arena: in place, or through staging slice a and back. */
  private viaArena(arena: Arena, acc: Float32Array | Uint16Array, fn: (dst: number) => void): void {
    if (this.inArena(acc)) return fn(acc.byteOffset);
    const staged = acc instanceof Float32Array ? this.f32(arena.a, acc.length) : this.u16(arena.a, acc.length);
    staged.set(acc);
    fn(arena.a);
    acc.set(staged as never);
  }

  private f32(at: number, n: number): Float32Array {
    return new Float32Array(this.arena!.memory.buffer, at, n);
  }

  private u16(at: number, n: number): Uint16Array {
    return new Uint16Array(this.arena!.memory.buffer, at, n);
  }

  private inArena(b: ArrayBufferView): boolean {
    return this.arena !== null && this.arena !== undefined && b.buffer === this.arena.memory.buffer;
  }

  /** Made on first use: a link that never receives reduce-scatter chunks never reserves it. */
  private getArena(): Arena | null {
    if (this.arena === undefined) {
      const m = simdMemory(2 * SLICE_BYTES + this.capacityBytes);
      this.arena = m && { memory: m.memory, k: m.kernels, a: 0, b: SLICE_BYTES, next: 2 * SLICE_BYTES };
    }
    return this.arena;
  }
}
