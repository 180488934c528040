// A WebAssembly SIMD add, `dst[i] += src[i]` over fp32 lanes four at a time, on a memory the caller owns.
// V8 does not vectorise the plain JavaScript loop (about one element per ns here), and reduce-scatter's
// adds were a third of its CPU time. The module is assembled by hand: 105 bytes, no toolchain.

// (func (export "add") (param $dst i32) (param $src i32) (param $n i32)   ;; $n: bytes, a multiple of 16
//   (local $end i32)  $end = $dst + $n
//   while $dst < $end: v128.store($dst, f32x4.add(v128.load($dst), v128.load($src))); $dst += 16; $src += 16)
// with its memory imported as "e" "m".
const BODY = [
  0x01, 0x01, 0x7f, //                       one local: i32 $end
  0x20, 0x00, 0x20, 0x02, 0x6a, 0x21, 0x03, // $end = $dst + $n
  0x02, 0x40, 0x03, 0x40, //                 block, loop
  0x20, 0x00, 0x20, 0x03, 0x4f, 0x0d, 0x01, // leave the block when $dst >= $end
  0x20, 0x00, //                             address for the store
  0x20, 0x00, 0xfd, 0x00, 0x04, 0x00, //     v128.load $dst
  0x20, 0x01, 0xfd, 0x00, 0x04, 0x00, //     v128.load $src
  0xfd, 0xe4, 0x01, //                       f32x4.add
  0xfd, 0x0b, 0x04, 0x00, //                 v128.store
  0x20, 0x00, 0x41, 0x10, 0x6a, 0x21, 0x00, // $dst += 16
  0x20, 0x01, 0x41, 0x10, 0x6a, 0x21, 0x01, // $src += 16
  0x0c, 0x00, 0x0b, 0x0b, 0x0b, //           br loop; end loop; end block; end func
];
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x07, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00, // type section: (i32 i32 i32) -> ()
  0x02, 0x08, 0x01, 0x01, 0x65, 0x01, 0x6d, 0x02, 0x00, 0x01, // import "e" "m": a memory of at least 1 page
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x07, 0x07, 0x01, 0x03, 0x61, 0x64, 0x64, 0x00, 0x00, // export "add" = function 0
  0x0a, BODY.length + 2, 0x01, BODY.length, ...BODY, // code section
]);

/** Byte offsets into the memory; `bytes` a multiple of 16. */
export type WasmAdd = (dst: number, src: number, bytes: number) => void;

/** A fixed-size memory with the add bound to it, or null where WebAssembly SIMD (or the memory) is unavailable. */
export function simdMemory(bytes: number): { memory: Uint8Array; add: WasmAdd } | null {
  try {
    if (typeof WebAssembly === 'undefined' || !WebAssembly.validate(MODULE)) return null;
    const memory = new WebAssembly.Memory({ initial: Math.ceil(bytes / 65536) });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(MODULE), { e: { m: memory } });
    // Never grown: growing would detach every view handed out, some of them pending socket reads.
    return { memory: new Uint8Array(memory.buffer), add: instance.exports.add as WasmAdd };
  } catch {
    return null;
  }
}

/** The plain loop, kept monomorphic (Float32Array only) so the JIT emits a tight loop. */
export function addLoop(acc: Float32Array, x: Float32Array, from: number, n: number): void {
  for (let i = from; i < n; i++) acc[i] += x[i];
}
