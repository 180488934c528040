"""PyTorch's side of the Phi-3 test: Phi3ForCausalLM's weights hold q, k and v as one qkv_proj and gate and up
as one gate_up_proj (rows in that order, as transformers' Phi3Attention and Phi3MLP split them); split so, the
model is torch_llama.py's, which trains it (full-batch torch.optim.Adam) and whose result is fused back.

usage: torch_phi3.py INITIAL DATA OUT SHAPE STEPS LR   (SHAPE: LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ,VOCAB)
"""
import os
import sys
import tempfile

import torch

from st_io import read, write
import torch_llama


def split(params, D, K, FF):
    out = {}
    for name, t in params.items():
        if name.endswith("self_attn.qkv_proj.weight"):
            base = name[: -len("qkv_proj.weight")]
            q, k, v = torch.split(t, [D, K, K], dim=0)
            out.update({base + "q_proj.weight": q, base + "k_proj.weight": k, base + "v_proj.weight": v})
        elif name.endswith("mlp.gate_up_proj.weight"):
            base = name[: -len("gate_up_proj.weight")]
            gate, up = torch.split(t, [FF, FF], dim=0)
            out.update({base + "gate_proj.weight": gate, base + "up_proj.weight": up})
        else:
            out[name] = t
    return out


def fuse(params):
    out = {}
    for name, t in params.items():
        if name.endswith("self_attn.q_proj.weight"):
            base = name[: -len("q_proj.weight")]
            out[base + "qkv_proj.weight"] = torch.cat([t, params[base + "k_proj.weight"], params[base + "v_proj.weight"]], dim=0)
        elif name.endswith("mlp.gate_proj.weight"):
            base = name[: -len("gate_proj.weight")]
            out[base + "gate_up_proj.weight"] = torch.cat([t, params[base + "up_proj.weight"]], dim=0)
        elif not name.endswith(("self_attn.k_proj.weight", "self_attn.v_proj.weight", "mlp.up_proj.weight")):
            out[name] = t  # the fused parts are in their run
    return out


if __name__ == "__main__":
    initial, data, out, shape, steps, lr = sys.argv[1:7]
    L, D, H, KV, FF, T, V = (int(s) for s in shape.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        split_in, split_out = os.path.join(tmp, "in.safetensors"), os.path.join(tmp, "out.safetensors")
        write(split_in, split(read(initial), D, KV * (D // H), FF))
        torch_llama.replay(split_in, data, split_out, shape, steps, lr)
        write(out, fuse({k: v.detach() for k, v in read(split_out).items()}))
