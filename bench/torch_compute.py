"""PyTorch on one CPU thread (or THREADS), the peer that bench/compute.ts compares against: the three products of a
Linear layer at given shapes, and one training step (forward, backward, Adam) of an MLP.

usage: /usr/bin/python3 bench/torch_compute.py WIDTHS ROWS[,ROWS...] REPS [THREADS]
prints one JSON line: {"kernels": {"ROWSxINxOUT": {"forward": s, "dx": s, "dw": s}}, "step": {"ROWS": s}}
(median seconds over REPS repetitions each)
"""
import json
import sys

import torch

from torch_timing import median_time

torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
widths = [int(w) for w in sys.argv[1].split(",")]
rows_list = [int(r) for r in sys.argv[2].split(",")]
reps = int(sys.argv[3])


out = {"kernels": {}, "step": {}, "torch": torch.__version__}
with torch.no_grad():
    for rows in rows_list:
        for k, n in zip(widths[:-1], widths[1:]):
            x, w, b, dy = torch.randn(rows, k), torch.randn(n, k), torch.randn(n), torch.randn(rows, n)
            out["kernels"][f"{rows}x{k}x{n}"] = {
                "forward": median_time(lambda: torch.nn.functional.linear(x, w, b), reps),
                "dx": median_time(lambda: dy @ w, reps),
                "dw": median_time(lambda: dy.t() @ x, reps),
            }

layers = []
for i, (k, n) in enumerate(zip(widths[:-1], widths[1:])):
    layers.append(torch.nn.Linear(k, n))
    if i < len(widths) - 2:
        layers.append(torch.nn.GELU())
model = torch.nn.Sequential(*layers)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for rows in rows_list:
    x = torch.randn(rows, widths[0])
    y = torch.randint(0, widths[-1], (rows,))

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    out["step"][str(rows)] = median_time(step, reps)
print(json.dumps(out))
