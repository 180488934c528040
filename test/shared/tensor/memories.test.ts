import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newMemory, touchPages } from '../../../shared/tensor/wasm/memories.js';

/** This process's resident bytes (VmRSS). */
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;

describe('touchPages', () => {
  it("maps a fresh memory's pages from an offset on, keeps what they hold, and lets the event loop run between slices", async () => {
    const bytes = 64 << 20;
    const memory = newMemory({ initial: bytes / 65536 });
    const view = new Uint8Array(memory.buffer);
    for (let i = 0; i < bytes; i += 1 << 20) view[i + 7] = (i >> 20) & 255; // a byte in every MiB, its pages mapped
    const before = rss();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await touchPages(memory, 16 << 20, 2);
    clearInterval(timer);
    const grew = rss() - before;
    // The first 16 MiB were left alone; of the other 48, a page per MiB was mapped already.
    expect(grew).toBeGreaterThan(0.9 * (48 << 20));
    expect(grew).toBeLessThan(1.1 * (48 << 20));
    for (let i = 0; i < bytes; i += 1 << 20) expect(view[i + 7]).toBe((i >> 20) & 255);
    expect(view.reduce((n, b) => n + b, 0)).toBe(Array.from({ length: 64 }, (_, k) => k).reduce((a, b) => a + b, 0)); // nothing else written
    expect(ticks).toBeGreaterThan(1); // timers ran while it worked: it yields, it is not one synchronous stretch
  });
});
