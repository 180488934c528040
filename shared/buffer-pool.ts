// Receive buffers of one link, reused across chunks and collectives, and the add that reduce-scatter runs
// on them. A fresh 1 MiB ArrayBuffer per chunk costs an mmap, 256 page faults and a later GC; a reused one
// costs nothing. The buffers are carved from a fixed WebAssembly memory, so the SIMD add (simd-add.ts)
// works on a received chunk in place: only the local operand is staged into that memory, a slice at a time.
import { addLoop, simdMemory, type WasmAdd } from './simd-add.js';

/** Bytes per staged slice of an operand (two of them: stays in L2 next to the streamed data). */
const SLICE_BYTES = 64 * 1024;
const ALIGN = 16;

interface Arena {
  memory: Uint8Array;
  add: WasmAdd;
  a: Float32Array; // staging slice for the accumulator, when it is not in the arena
  b: Float32Array; // staging slice for the other operand
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

  /** acc[i] += x[i] for i < n: in place with SIMD when `acc` is one of this pool's arena buffers, staged
   *  through the arena otherwise, and the plain loop where WebAssembly SIMD is unavailable. */
  addInto(acc: Float32Array, x: Float32Array, n: number): void {
    const arena = this.getArena();
    if (!arena) return addLoop(acc, x, 0, n);
    const whole = n - (n % 4);
    const slice = arena.b.length;
    const inPlace = acc.buffer === arena.memory.buffer;
    for (let at = 0; at < whole; at += slice) {
      const len = Math.min(slice, whole - at);
      arena.b.set(x.subarray(at, at + len));
      if (inPlace) arena.add(acc.byteOffset + at * 4, arena.b.byteOffset, len * 4);
      else {
        arena.a.set(acc.subarray(at, at + len));
        arena.add(arena.a.byteOffset, arena.b.byteOffset, len * 4);
        acc.set(arena.a.subarray(0, len), at);
      }
    }
    addLoop(acc, x, whole, n);
  }

  private inArena(b: Uint8Array): boolean {
    return this.arena !== null && this.arena !== undefined && b.buffer === this.arena.memory.buffer;
  }

  /** Made on first use: a link that never receives reduce-scatter chunks never reserves it. */
  private getArena(): Arena | null {
    if (this.arena === undefined) {
      const m = simdMemory(2 * SLICE_BYTES + this.capacityBytes);
      this.arena = m && {
        ...m,
        a: new Float32Array(m.memory.buffer, 0, SLICE_BYTES / 4),
        b: new Float32Array(m.memory.buffer, SLICE_BYTES, SLICE_BYTES / 4),
        next: 2 * SLICE_BYTES,
      };
    }
    return this.arena;
  }
}
