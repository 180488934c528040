// The kernels' WebAssembly modules (assembled from wasm/*.wat at build time), instantiated on a memory the
// caller owns. Where the engine validates relaxed SIMD (Node 24: its fused multiply-add), that build runs;
// elsewhere the plain-SIMD build of the same source. Null where WebAssembly SIMD is unavailable.
import { WASM_MODULES } from './modules.generated.js';

export type SimdFlavour = 'relaxed-simd' | 'simd';

const compiled = new Map<string, { module: WebAssembly.Module; flavour: SimdFlavour } | null>();

function compile(name: string): { module: WebAssembly.Module; flavour: SimdFlavour } | null {
  if (compiled.has(name)) return compiled.get(name)!;
  const builds = WASM_MODULES[name];
  if (!builds) throw new Error(`no WebAssembly module named ${name}`);
  let found: { module: WebAssembly.Module; flavour: SimdFlavour } | null = null;
  if (typeof WebAssembly !== 'undefined') {
    for (const [bytes, flavour] of [
      [builds.relaxed, 'relaxed-simd'],
      [builds.plain, 'simd'],
    ] as const) {
      if (bytes === null) continue;
      const code = Buffer.from(bytes, 'base64');
      if (WebAssembly.validate(code)) {
        found = { module: new WebAssembly.Module(code), flavour };
        break;
      }
    }
  }
  compiled.set(name, found);
  return found;
}

/** Module `name`'s exports bound to `memory`, and which build runs; null without WebAssembly SIMD. */
export function instantiate<T>(name: string, memory: WebAssembly.Memory): { exports: T; flavour: SimdFlavour } | null {
  const c = compile(name);
  if (!c) return null;
  const instance = new WebAssembly.Instance(c.module, { e: { m: memory } });
  return { exports: instance.exports as T, flavour: c.flavour };
}

/** Which build of module `name` runs here (for the log), or null when none can. */
export function flavourOf(name: string): SimdFlavour | null {
  return compile(name)?.flavour ?? null;
}
