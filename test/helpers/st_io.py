"""safetensors read and written with the standard library and torch alone (the test helpers' shared I/O).

ZEROWIRE_REF_DTYPE=float64 runs a reference in double precision: every float tensor read becomes float64, torch's
default dtype is float64 (so tensors a script makes are too), and float64 tensors are written as F64. The tests
set one replay in fp32 beside the same replay in float64 to learn how far fp32 arithmetic alone moves a result
(test/helpers/reference.ts).
"""
import json
import os
import struct

import torch

FLOAT = torch.float64 if os.environ.get("ZEROWIRE_REF_DTYPE") == "float64" else torch.float32
torch.set_default_dtype(FLOAT)

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32, "I64": torch.int64}


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        x = torch.frombuffer(bytearray(raw[8 + n + a : 8 + n + b]), dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
        out[name] = x.to(FLOAT) if x.is_floating_point() else x
    return out


def write(path, tensors):
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        wide = t.dtype == torch.float64
        b = t.detach().contiguous().numpy().astype("<f8" if wide else "<f4").tobytes()
        header[name] = {"dtype": "F64" if wide else "F32", "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
