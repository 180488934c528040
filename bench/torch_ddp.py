"""torch.distributed DDP (gloo, CPU, one thread per rank) training an MLP: the peer that bench/step.ts
compares zerowire's DP and ZeRO-3 steps against.

usage: /usr/bin/python3 bench/torch_ddp.py WORLD WIDTHS GLOBAL_BATCH STEPS
prints one JSON line: {"step_ms": [per step, the slowest rank's time]}
With ZW_RANK, ZW_WORLD and ZW_MASTER in the environment (deploy/lan/lan.sh --exec) it is one rank of a job
on that LAN instead (WORLD is then ZW_WORLD's), gloo on eth0; rank 0 prints the line.
"""
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, widths, batch, steps, port, queue, master="127.0.0.1"):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = master
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
    if queue is not None:
        queue.put((rank, times))
    else:
        every = [None] * world
        dist.all_gather_object(every, times)
        if rank == 0:
            print(json.dumps({"step_ms": [max(t[i] for t in every) for i in range(steps)]}), flush=True)
        # A rank that exits while its last frames are still in flight over a shaped link can leave a peer
        # waiting for them forever (seen: two of four ranks done, two spinning): everyone waits, then lingers.
        dist.barrier()
        time.sleep(1)
    dist.destroy_process_group()


def main():
    world, widths, batch, steps = int(sys.argv[1]), [int(w) for w in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4])
    if "ZW_RANK" in os.environ:  # one rank of a LAN job
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "eth0")
        world = int(os.environ["ZW_WORLD"])
        worker(int(os.environ["ZW_RANK"]), world, widths, batch, steps, 29500, None, os.environ["ZW_MASTER"])
        return
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
