"""PyTorch's side of the Llama workload's test, written from Hugging Face's LlamaForCausalLM conventions and
not from zerowire's code: RMSNorm in fp32 (eps 1e-6), rotary embeddings with rotate_half (theta 10000),
grouped-query attention by repeating k and v to the query heads, causal softmax, SwiGLU, a projection's bias
where the weights hold one (Qwen2's q, k and v), Qwen3's per-head q and k norms and head width where the
weights hold them, lm_head untied or (no lm_head.weight) tied to the token table. Reads the weights (HF names) and a batch, writes the logits, the mean loss, every parameter's
gradient (grad.NAME) and the weights after one torch.optim.Adam step (step.NAME).

usage: torch_llama.py IN OUT LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ,VOCAB LR
IN holds the weights and `tokens`, `targets` (int32, rows x SEQ).
usage: torch_llama.py replay INITIAL DATA OUT LAYERS,DIM,HEADS,KV_HEADS,FF,SEQ,VOCAB STEPS LR
trains a zerowire --dump's initial weights with full-batch torch.optim.Adam on its data (sample i is
tokens[i*SEQ : i*SEQ+SEQ], its targets one further; step t trains on samples batch_rows[t]) and writes the
final weights.
"""
import math
import sys

import torch

from st_io import FLOAT, read, write
import variant


def rms_norm(x, w, eps=1e-6):
    wide = x.to(FLOAT)  # fp32 as HF computes it; float64 in the float64 reference
    return w * (wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def plain(params, module, x):
    y = x @ params[f"{module}.weight"].T
    bias = params.get(f"{module}.bias")  # Qwen2's q, k and v projections have one
    return y if bias is None else y + bias


def forward(params, tokens, L, D, H, KV, T, V, lin=plain):
    """The logits of a batch of token rows; `lin(params, module, x)` computes each Linear (no biases)."""
    # each head's width: the q projection's rows over the heads (Qwen3's head_dim need not be D // H)
    hd = params["model.layers.0.self_attn.q_proj.weight"].shape[0] // H
    B = tokens.shape[0]
    inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.int64).to(FLOAT) / hd))
    freqs = torch.outer(torch.arange(T).to(FLOAT), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((T, T), float("-inf")).triu(1)

    x = params["model.embed_tokens.weight"][tokens]
    for i in range(L):
        p = lambda n: params[f"model.layers.{i}.{n}"]  # noqa: E731
        h = rms_norm(x, p("input_layernorm.weight"))
        q = lin(params, f"model.layers.{i}.self_attn.q_proj", h).view(B, T, H, hd)
        k = lin(params, f"model.layers.{i}.self_attn.k_proj", h).view(B, T, KV, hd)
        if f"model.layers.{i}.self_attn.q_norm.weight" in params:  # Qwen3: each head of q and k RMSNorm-ed
            q = rms_norm(q, p("self_attn.q_norm.weight"))
            k = rms_norm(k, p("self_attn.k_norm.weight"))
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = lin(params, f"model.layers.{i}.self_attn.v_proj", h).view(B, T, KV, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // KV, dim=1)
        v = v.repeat_interleave(H // KV, dim=1)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, H * hd)
        x = x + lin(params, f"model.layers.{i}.self_attn.o_proj", y)
        m = rms_norm(x, p("post_attention_layernorm.weight"))
        g = lin(params, f"model.layers.{i}.mlp.gate_proj", m)
        u = lin(params, f"model.layers.{i}.mlp.up_proj", m)
        x = x + lin(params, f"model.layers.{i}.mlp.down_proj", torch.nn.functional.silu(g) * u)
    h = rms_norm(x, params["model.norm.weight"])
    if "lm_head.weight" not in params:  # tied (tie_word_embeddings): the head is the token table itself
        return h @ params["model.embed_tokens.weight"].T
    return lin(params, "lm_head", h)


def one_step(in_path, out_path, shape, lr):
    L, D, H, KV, FF, T, V = (int(s) for s in shape.split(","))
    data = read(in_path)
    tokens, targets = data.pop("tokens").long(), data.pop("targets").long()
    params = {k: torch.nn.Parameter(v.clone()) for k, v in data.items()}
    logits = forward(params, tokens, L, D, H, KV, T, V)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
    loss.backward()
    out = {"logits": logits.reshape(-1, V), "loss": loss.reshape(1)}
    out.update({f"grad.{k}": p.grad for k, p in params.items()})
    opt = torch.optim.Adam(params.values(), lr=float(lr), betas=(0.9, 0.999), eps=1e-8)
    opt.step()
    out.update({f"step.{k}": p for k, p in params.items()})
    write(out_path, out)


def replay(initial, data_path, out_path, shape, steps, lr):
    L, D, H, KV, FF, T, V = (int(s) for s in shape.split(","))
    params = {k: torch.nn.Parameter(v.clone()) for k, v in read(initial).items()}
    data = read(data_path)
    corpus, order = data["tokens"].long(), data["batch_rows"].long()
    opt = torch.optim.Adam(params.values(), lr=float(lr), betas=(0.9, 0.999), eps=1e-8)
    for t in range(int(steps)):
        rows = variant.rows(t, order[t])
        idx = rows[:, None] * T + torch.arange(T)[None, :]
        opt.zero_grad()
        logits = forward(params, corpus[idx], L, D, H, KV, T, V)
        torch.nn.functional.cross_entropy(logits.reshape(-1, V), corpus[idx + 1].reshape(-1)).backward()
        variant.grads(params.values())
        opt.step()
        variant.stepped(opt, t)
    write(out_path, params)


if __name__ == "__main__":
    if sys.argv[1] == "replay":
        replay(*sys.argv[2:8])
    else:
        one_step(*sys.argv[1:5])
