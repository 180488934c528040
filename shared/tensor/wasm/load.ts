// The kernels' WebAssembly modules (assembled from wasm/*.wat at build time), instantiated on a memory the
// caller owns. Where the engine validates relaxed SIMD (Node 24: its fused multiply-add), that build runs;
// elsewhere the plain-SIMD build of the same source. Null where WebAssembly SIMD is unavailable.
import { WASM_MODULES } from './modules.generated.js';

export type SimdFlavour = 'relaxed-simd' | 'simd';

const compiled = new Map<string, { module: WebAssembly.Module; flavour: SimdFlavour } | null>();

/** The builds of module `name` this engine can run, best first. */
export function flavoursOf(name: string): SimdFlavour[] {
  const builds = WASM_MODULES[name];
  if (!builds) throw new Error(`no WebAssembly module named ${name}`);
  if (typeof WebAssembly === 'undefined') return [];
  const all = [
    [builds.relaxed, 'relaxed-simd'],
    [builds.plain, 'simd'],
  ] as const;
  return all.filter(([bytes]) => bytes !== null && WebAssembly.validate(Buffer.from(bytes, 'base64'))).map(([, f]) => f);
}

function compile(name: string, flavour?: SimdFlavour): { module: WebAssembly.Module; flavour: SimdFlavour } | null {
  const key = `${name}:${flavour ?? 'best'}`;
  if (compiled.has(key)) return compiled.get(key)!;
  const chosen = flavour ?? flavoursOf(name)[0];
  const bytes = chosen === undefined ? null : chosen === 'relaxed-simd' ? WASM_MODULES[name].relaxed : WASM_MODULES[name].plain;
  const found = chosen && bytes ? { module: new WebAssembly.Module(Buffer.from(bytes, 'base64')), flavour: chosen } : null;
  compiled.set(key, found);
  return found;
}

/** Module `name`'s exports bound to `memory`, and which build runs (the best this engine can, unless
 *  `flavour` names one); null without WebAssembly SIMD. */
export function instantiate<T>(name: string, memory: WebAssembly.Memory, flavour?: SimdFlavour): { exports: T; flavour: SimdFlavour } | null {
  const c = compile(name, flavour);
  if (!c) return null;
  const instance = new WebAssembly.Instance(c.module, { e: { m: memory } });
  return { exports: instance.exports as T, flavour: c.flavour };
}
