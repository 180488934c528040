// The kernels' WebAssembly modules (assembled from wasm/*.wat at build time), instantiated on a memory the
// caller owns. Where the engine validates relaxed SIMD (Node 24: its fused multiply-add), that build runs;
// elsewhere the plain-SIMD build of the same source. A shared memory (kernel threads) takes the modules'
// shared-memory builds. Null where WebAssembly SIMD is unavailable.
import { WASM_MODULES } from './modules.generated.js';

export type SimdFlavour = 'relaxed-simd' | 'simd';

const compiled = new Map<string, WebAssembly.Module>();

function bytesOf(name: string, flavour: SimdFlavour, shared: boolean): string | null {
  const module = WASM_MODULES[name];
  if (!module) throw new Error(`no WebAssembly module named ${name}`);
  const builds = shared ? module.shared : module.own;
  return flavour === 'relaxed-simd' ? builds.relaxed : builds.plain;
}

/** The builds of module `name` this engine can run, best first. */
export function flavoursOf(name: string): SimdFlavour[] {
  if (typeof WebAssembly === 'undefined') return [];
  return (['relaxed-simd', 'simd'] as const).filter((f) => {
    const bytes = bytesOf(name, f, false);
    return bytes !== null && WebAssembly.validate(Buffer.from(bytes, 'base64'));
  });
}

/** Module `name`'s exports bound to `memory`, and which build runs (the best this engine can, unless
 *  `flavour` names one); null without WebAssembly SIMD. */
export function instantiate<T>(name: string, memory: WebAssembly.Memory, flavour?: SimdFlavour): { exports: T; flavour: SimdFlavour } | null {
  const chosen = flavour ?? flavoursOf(name)[0];
  if (!chosen) return null;
  const shared = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
  const key = `${name}:${chosen}:${shared}`;
  let module = compiled.get(key);
  if (!module) {
    const bytes = bytesOf(name, chosen, shared);
    if (bytes === null) return null;
    module = new WebAssembly.Module(Buffer.from(bytes, 'base64'));
    compiled.set(key, module);
  }
  const instance = new WebAssembly.Instance(module, { e: { m: memory } });
  return { exports: instance.exports as T, flavour: chosen };
}
