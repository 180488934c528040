"""torch.distributed DDP (gloo, CPU, one thread per rank) training an MLP: the peer that bench/step.ts
compares zerowire's DP and ZeRO-3 steps against.

usage: /usr/bin/python3 bench/torch_ddp.py WORLD WIDTHS GLOBAL_BATCH STEPS
prints one JSON line: {"step_ms": [per step, the slowest rank's time]}
"""
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, widths, batch, steps, port, queue):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    layers = []
    for i, (k, n) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(k, n))
        if i < len(widths) - 2:
            layers.append(torch.nn.GELU())
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(*layers))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rows = batch // world
    x = torch.randn(rows, widths[0])
    y = torch.randint(0, widths[-1], (rows,))
    times = []
    for _ in range(steps):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    queue.put((rank, times))
    dist.destroy_process_group()


def main():
    world, widths, batch, steps = int(sys.argv[1]), [int(w) for w in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world, widths, batch, steps, port, queue)) for r in range(world)]
    for p in procs:
        p.start()
    per_rank = dict(queue.get() for _ in procs)
    for p in procs:
        p.join()
    print(json.dumps({"step_ms": [max(per_rank[r][i] for r in per_rank) for i in range(steps)]}))


if __name__ == "__main__":
    main()
