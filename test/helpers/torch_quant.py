"""PyTorch's side of the block-quantization test: the scheme written from its definition, not from zerowire's
code. Per block of BLOCK values: scale = max|x| / qmax (qmax 127 for int8, 7 for int4), codes =
round-half-even(x / scale) (0 where the block is all zeros), values back = codes * scale, all in fp32.
int4 codes are packed two a byte, the even one in the low nibble.

usage: torch_quant.py IN OUT BLOCK
IN holds fp32 vectors; OUT gets, per vector NAME and bits B in (8, 4): NAME.B.scales, NAME.B.codes (int8,
one per value), NAME.B.packed (int4 only, uint8 as int32), NAME.B.back.
"""
import sys

import torch

from st_io import read, write


def quantize(x, block, bits):
    qmax = 127.0 if bits == 8 else 7.0
    n = x.numel()
    nb = (n + block - 1) // block
    padded = torch.zeros(nb * block, dtype=torch.float32)
    padded[:n] = x
    blocks = padded.view(nb, block)
    amax = blocks.abs().amax(dim=1)
    scale = amax / torch.tensor(qmax, dtype=torch.float32)
    safe = torch.where(amax > 0, scale, torch.ones_like(scale))
    codes = torch.where(amax[:, None] > 0, torch.round(blocks / safe[:, None]), torch.zeros_like(blocks))
    codes = codes.reshape(-1)[:n].to(torch.int8)
    back = (codes.to(torch.float32).view(-1)[:n])
    per = torch.arange(n) // block
    back = back * scale[per]
    return scale, codes, back


def pack(codes):
    c = codes.to(torch.int32) & 15
    if c.numel() % 2:
        c = torch.cat([c, torch.zeros(1, dtype=torch.int32)])
    return c[0::2] | (c[1::2] << 4)


def main(inp, out, block):
    block = int(block)
    res = {}
    for name, x in read(inp).items():
        for bits in (8, 4):
            scale, codes, back = quantize(x.reshape(-1), block, bits)
            res[f"{name}.{bits}.scales"] = scale
            res[f"{name}.{bits}.codes"] = codes.to(torch.int32)
            res[f"{name}.{bits}.back"] = back
            if bits == 4:
                res[f"{name}.{bits}.packed"] = pack(codes)
    write(out, res)


if __name__ == "__main__":
    main(*sys.argv[1:4])
