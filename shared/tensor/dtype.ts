// Element types on the wire and in the 16-bit working copy.
// A bf16 tensor is a Uint16Array of raw bf16 bits; an fp32 tensor is a Float32Array.

export const WIRE_DTYPES = ['fp32', 'bf16'] as const;
export type WireDtype = (typeof WIRE_DTYPES)[number];
export type Elems = Float32Array | Uint16Array;

export function bytesPerElement(dtype: WireDtype): number {
  return dtype === 'fp32' ? 4 : 2;
}

/** Whether a band holds values, or is a what-if rank's extent (extent.ts): a length and a dtype only. The one
 *  place that tells them apart: code that asks "fp32?" asks dtypeOf, never instanceof (an fp32 extent is no
 *  Float32Array, and a modeled run that took it for bf16 allocated a band the real run does not). */
export function isExtent(x: Elems): x is Elems & { readonly dtype: WireDtype } {
  return 'dtype' in x;
}

export function dtypeOf(x: Elems): WireDtype {
  if (isExtent(x)) return x.dtype;
  return x instanceof Float32Array ? 'fp32' : 'bf16';
}

export function emptyOf(dtype: WireDtype, n: number): Elems {
  return dtype === 'fp32' ? new Float32Array(n) : new Uint16Array(n);
}

/** The raw bytes of a typed array, without copying. */
export function bytesOf(x: Elems): Uint8Array {
  return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
}

/** Smallest multiple of `world` that holds `n` elements: what a ring collective actually moves. */
export function paddedLength(n: number, world: number): number {
  return Math.ceil(n / world) * world;
}
