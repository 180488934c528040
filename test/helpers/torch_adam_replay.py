"""PyTorch's side of the resharded-resume test: load an MLP's weights and Adam's m, v and step from a
safetensors file (names as zerowire's state dict: layers.I.weight, m.layers.I.weight, v.layers.I.weight),
run torch.optim.Adam over full batches of a zerowire --dump's data, and write the final weights.

usage: torch_adam_replay.py START DATA OUT WIDTHS FIRST_STEP STEPS BATCH LR
"""
import sys

import torch

from st_io import read, write
import variant


start_path, data_path, out_path, widths, first, steps, batch, lr = sys.argv[1:9]
widths = [int(w) for w in widths.split(",")]
first, steps, batch, lr = int(first), int(steps), int(batch), float(lr)
torch.manual_seed(0)
linears = [torch.nn.Linear(k, n) for k, n in zip(widths[:-1], widths[1:])]
layers = []
for i, lin in enumerate(linears):
    layers.append(lin)
    if i < len(linears) - 1:
        layers.append(torch.nn.GELU())
model = torch.nn.Sequential(*layers)
start = read(start_path)
names = [(f"layers.{i}.{p}", getattr(lin, p)) for i, lin in enumerate(linears) for p in ("weight", "bias")]
opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
with torch.no_grad():
    for name, p in names:
        p.copy_(start[name])
for name, p in names:
    opt.state[p] = {"step": torch.tensor(float(first)), "exp_avg": start["m." + name].clone(), "exp_avg_sq": start["v." + name].clone()}
data = read(data_path)
x, y, order = data["x"], data["y"].long(), data["batch_rows"].long().reshape(-1)
for t in range(first, first + steps):
    rows = variant.rows(t, order[t * batch : (t + 1) * batch])
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x[rows]), y[rows]).backward()
    variant.grads(model.parameters())
    opt.step()
    variant.stepped(opt, t - first)
write(out_path, {name: p for name, p in names})
