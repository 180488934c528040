// fp32 <-> bf16 with round-to-nearest-even, bit-identical to torch's Tensor.to(torch.bfloat16).

const scratchF = new Float32Array(1);
const scratchU = new Uint32Array(scratchF.buffer);

/** Round the fp32 bit pattern `x` to bf16 bits. NaN stays NaN (quiet), infinities stay infinities. */
function roundBits(x: number): number {
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

export function toBf16(value: number): number {
  scratchF[0] = value;
  return roundBits(scratchU[0]);
}

export function fromBf16(bits: number): number {
  scratchU[0] = bits << 16;
  return scratchF[0];
}

/** dst[i] = bf16(src[i]) for i < src.length. */
export function encodeBf16(src: Float32Array, dst: Uint16Array): void {
  const u = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < u.length; i++) dst[i] = roundBits(u[i]);
}

/** dst[i] = float(src[i]) for i < src.length. Exact: every bf16 is an fp32. */
export function decodeBf16(src: Uint16Array, dst: Float32Array): void {
  const u = new Uint32Array(dst.buffer, dst.byteOffset, src.length);
  for (let i = 0; i < src.length; i++) u[i] = src[i] << 16;
}
