// Receive buffers for reduce-scatter chunks, reused across chunks and collectives. A fresh 1 MiB ArrayBuffer
// per chunk costs an mmap, 256 page faults and a later GC; a reused one costs nothing.

export class BufferPool {
  private readonly free = new Map<number, Uint8Array[]>();
  private readonly mine = new WeakSet<ArrayBufferLike>();
  private retained = 0;

  /** `maxRetainedBytes` bounds what idle buffers may hold; beyond it returned buffers are left to the GC. */
  constructor(private readonly maxRetainedBytes: number) {}

  take(bytes: number): Uint8Array {
    const b = this.free.get(bytes)?.pop();
    if (b) {
      this.retained -= bytes;
      return b;
    }
    const fresh = new Uint8Array(bytes);
    this.mine.add(fresh.buffer);
    return fresh;
  }

  /** Return a buffer that take() gave out; anything else is ignored, so callers need not track origins. */
  give(b: Uint8Array): void {
    if (!this.mine.has(b.buffer) || b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength) return;
    if (this.retained + b.byteLength > this.maxRetainedBytes) return;
    const list = this.free.get(b.byteLength) ?? [];
    if (list.some((x) => x.buffer === b.buffer)) return; // given back twice
    list.push(b);
    this.free.set(b.byteLength, list);
    this.retained += b.byteLength;
  }

  /** Bytes held by idle buffers. */
  get idleBytes(): number {
    return this.retained;
  }
}
