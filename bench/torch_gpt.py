"""PyTorch on one CPU thread (or THREADS), the peer that bench/gpt-step.ts compares against: one training step
(forward, backward, Adam) of the same pre-LN decoder as zerowire's --model gpt (shared/training/gpt.ts).

usage: /usr/bin/python3 bench/torch_gpt.py LAYERS,DIM,HEADS,SEQ,VOCAB SEQS[,SEQS...] REPS [THREADS]
prints one JSON line: {"step": {"SEQS": s}, "torch": version} (median seconds over REPS repetitions)
"""
import json
import math
import sys

import torch
import torch.nn.functional as F

from torch_timing import median_time

torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
L, D, H, T, V = (int(x) for x in sys.argv[1].split(","))
seqs_list = [int(s) for s in sys.argv[2].split(",")]
reps = int(sys.argv[3])


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.qkv, self.proj = torch.nn.Linear(D, 3 * D), torch.nn.Linear(D, D)
        self.fc, self.mproj = torch.nn.Linear(D, 4 * D), torch.nn.Linear(4 * D, D)
        self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)))

    def forward(self, x):
        b = x.shape[0]
        q, k, v = self.qkv(self.ln_1(x)).split(D, dim=2)
        q, k, v = (t.view(b, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        s = (q @ k.transpose(-2, -1)) / math.sqrt(D // H)
        y = s.masked_fill(~self.mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, T, D))
        return x + self.mproj(F.gelu(self.fc(self.ln_2(x))))


class Gpt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = torch.nn.Embedding(V, D), torch.nn.Embedding(T, D)
        self.h = torch.nn.ModuleList(Block() for _ in range(L))
        self.ln_f, self.head = torch.nn.LayerNorm(D), torch.nn.Linear(D, V, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(T))
        for b in self.h:
            x = b(x)
        return self.head(self.ln_f(x))


model = Gpt()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
out = {"step": {}, "torch": torch.__version__, "params": sum(p.numel() for p in model.parameters())}
for seqs in seqs_list:
    idx = torch.randint(0, V, (seqs, T))
    tgt = torch.randint(0, V, (seqs, T))

    def step():
        opt.zero_grad()
        F.cross_entropy(model(idx).view(-1, V), tgt.view(-1)).backward()
        opt.step()

    out["step"][str(seqs)] = median_time(step, reps)
print(json.dumps(out))
