// Every WebAssembly memory this thread makes, so the process's own figure for what it holds can include
// them: Node's process.memoryUsage().arrayBuffers does not count WebAssembly memories (checked: a 100 MiB
// memory adds 0 to it), and they hold the model states, the kernel arena and the receive buffers.
const live = new Set<WeakRef<WebAssembly.Memory>>();

export function newMemory(descriptor: ConstructorParameters<typeof WebAssembly.Memory>[0]): WebAssembly.Memory {
  const memory = new WebAssembly.Memory(descriptor);
  live.add(new WeakRef(memory));
  return memory;
}

/** Bytes of the WebAssembly memories of this thread that are still reachable. */
function wasmMemoryBytes(): number {
  let bytes = 0;
  for (const ref of live) {
    const m = ref.deref();
    if (m) bytes += m.buffer.byteLength;
    else live.delete(ref);
  }
  return bytes;
}

/** What this thread holds in buffers, as the engine reports it: ArrayBuffers plus WebAssembly memories. */
export function bufferBytes(): number {
  return process.memoryUsage().arrayBuffers + wasmMemoryBytes();
}
