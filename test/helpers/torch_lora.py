"""PyTorch's side of the fine-tuning tests, written from PEFT's LoraLayer and the models' torch conventions,
not from zerowire's code: every Linear whose MODULE.lora_A.weight and MODULE.lora_B.weight are in the weights
computes x W^T + b + (alpha / r) (x A^T) B^T (PEFT's forward, no dropout). Only the tensors whose names match
TRAINABLE (a Python regex) require grad; full-batch torch.optim.Adam trains them over a zerowire --dump's data.

usage: torch_lora.py INITIAL DATA OUT KIND SHAPE STEPS LR ALPHA TRAINABLE [dpu]
KIND mlp (SHAPE the widths, data x, y, batch_rows), gpt (LAYERS,DIM,HEADS,SEQ,VOCAB) or llama
(LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ,VOCAB; data tokens, batch_rows). Writes every tensor after STEPS steps.
dpu: ZeRO-Offload's one-step delayed parameter update: each step's gradient is taken at the weights the
passes hold, which then become the weights of the update before (the masters), and Adam updates the masters
with the gradient; the masters are written.
"""
import math
import re
import sys

import torch
import torch.nn.functional as F

from st_io import read, write
import variant
from torch_llama import forward as llama_forward


def lin(params, module, x, alpha, bias=True):
    """A Linear, with its LoRA adapter if the weights have one."""
    y = x @ params[f"{module}.weight"].T
    if bias and f"{module}.bias" in params:
        y = y + params[f"{module}.bias"]
    a = params.get(f"{module}.lora_A.weight")
    if a is not None:
        r = a.shape[0]
        y = y + (alpha / r) * ((x @ a.T) @ params[f"{module}.lora_B.weight"].T)
    return y


def mlp(params, x, widths, alpha):
    n = len(widths) - 1
    for i in range(n):
        x = lin(params, f"layers.{i}", x, alpha)
        if i < n - 1:
            x = F.gelu(x)
    return x


def gpt(params, tokens, shape, alpha):
    L, D, H, T, V = shape
    B = tokens.shape[0]
    hd = D // H
    mask = torch.full((T, T), float("-inf")).triu(1)
    x = params["tok_emb.weight"][tokens] + params["pos_emb.weight"][torch.arange(T)]
    for i in range(L):
        p = lambda n: params[f"h.{i}.{n}"]  # noqa: E731
        h = F.layer_norm(x, (D,), p("ln_1.weight"), p("ln_1.bias"))
        q, k, v = lin(params, f"h.{i}.attn.qkv", h, alpha).split(D, dim=-1)
        q, k, v = (t.view(B, T, H, hd).transpose(1, 2) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        x = x + lin(params, f"h.{i}.attn.proj", y, alpha)
        m = F.layer_norm(x, (D,), p("ln_2.weight"), p("ln_2.bias"))
        x = x + lin(params, f"h.{i}.mlp.proj", F.gelu(lin(params, f"h.{i}.mlp.fc", m, alpha)), alpha)
    x = F.layer_norm(x, (D,), params["ln_f.weight"], params["ln_f.bias"])
    return lin(params, "head", x, alpha)


def llama(params, tokens, shape, alpha):
    L, D, H, KV, FF, T, V = shape
    return llama_forward(params, tokens, L, D, H, KV, T, V, lin=lambda p, m, x: lin(p, m, x, alpha, bias=False))


def main(initial, data_path, out_path, kind, shape, steps, lr, alpha, trainable, mode="plain"):
    shape = [int(s) for s in shape.split(",")]
    alpha = float(alpha)
    params = {k: v.clone() for k, v in read(initial).items()}
    train = re.compile(trainable)
    names = [k for k in params if train.search(k)]
    assert names, f"no tensor matches {trainable}"
    trained = [params[k].requires_grad_() for k in names]
    masters = {k: params[k].detach().clone() for k in names} if mode == "dpu" else None
    opt = torch.optim.Adam(masters.values() if masters else trained, lr=float(lr), betas=(0.9, 0.999), eps=1e-8)
    data = read(data_path)
    order = data["batch_rows"].long()
    for t in range(int(steps)):
        rows = variant.rows(t, order[t])
        opt.zero_grad()
        if kind == "mlp":
            loss = F.cross_entropy(mlp(params, data["x"][rows], shape, alpha), data["y"].long()[rows])
        else:
            T = shape[3] if kind == "gpt" else shape[5]
            corpus = data["tokens"].long()
            idx = rows[:, None] * T + torch.arange(T)[None, :]
            forward = gpt if kind == "gpt" else llama
            logits = forward(params, corpus[idx], shape, alpha)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), corpus[idx + 1].reshape(-1))
        loss.backward()
        variant.grads(trained)
        if masters:
            with torch.no_grad():
                for k in names:
                    masters[k].grad = params[k].grad.clone()
                    params[k].copy_(masters[k])  # the next step's passes: the weights of the update before
                    params[k].grad = None
        opt.step()
        variant.stepped(opt, t)
    if masters:
        params.update(masters)
    write(out_path, params)


if __name__ == "__main__":
    main(*sys.argv[1:11])
