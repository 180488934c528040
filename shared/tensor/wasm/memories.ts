// Every WebAssembly memory this thread makes, so the process's own figure for what it holds can include
// them: Node's process.memoryUsage().arrayBuffers does not count WebAssembly memories (checked: a 100 MiB
// memory adds 0 to it), and they hold the model states, the kernel arena and the receive buffers.
const live = new Set<WeakRef<WebAssembly.Memory>>();

export function newMemory(descriptor: ConstructorParameters<typeof WebAssembly.Memory>[0]): WebAssembly.Memory {
  const memory = new WebAssembly.Memory(descriptor);
  live.add(new WeakRef(memory));
  return memory;
}

/** Bytes of the WebAssembly memories of this thread that are still reachable (no system call: cheap). */
export function wasmMemoryBytes(): number {
  let bytes = 0;
  for (const ref of live) {
    const m = ref.deref();
    if (m) bytes += m.buffer.byteLength;
    else live.delete(ref);
  }
  return bytes;
}

/** ArrayBuffers this process holds, as the engine counts them. process.memoryUsage() also reads the RSS from
 *  /proc, a system call that cost 0.5-0.7 ms a time in a rank of 4 on 2 cores (measured): call it sparingly. */
export function arrayBufferBytes(): number {
  return process.memoryUsage().arrayBuffers;
}

/** What this thread holds in buffers, as the engine reports it: ArrayBuffers plus WebAssembly memories. */
export function bufferBytes(): number {
  return arrayBufferBytes() + wasmMemoryBytes();
}

/** Write each 4 KiB page of `memory` from byte `from` once (the byte it holds), `sliceMs` at a time, letting
 *  the event loop run between slices. A fresh memory's pages are mapped by the kernel at their first write:
 *  at 33.6M parameters that cost DP's first optimizer step 3.6 s here (400 MB of optimizer state, 4 ranks
 *  on 2 cores of a VM), one synchronous stretch in which the rank answered no heartbeat. */
export async function touchPages(memory: WebAssembly.Memory, from = 0, sliceMs = 20): Promise<void> {
  for (let at = from; at < memory.buffer.byteLength;) {
    const bytes = new Uint8Array(memory.buffer);
    const t0 = performance.now();
    while (at < bytes.length && performance.now() - t0 < sliceMs) {
      for (const end = Math.min(bytes.length, at + (1 << 20)); at < end; at += 4096) bytes[at] |= 0;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
