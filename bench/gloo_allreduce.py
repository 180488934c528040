"""torch.distributed gloo all-reduce on this machine, the peer that bench/collectives.ts compares against.

usage: /usr/bin/python3 bench/gloo_allreduce.py WORLD BYTES ITERS
prints one JSON line: {"world":..,"bytes":..,"seconds":[max over ranks per iteration],
                       "user_ms":.., "sys_ms":.. (CPU time per rank per iteration, all threads, mean over ranks)}
"""
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, nbytes, iters, port, queue):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    t = torch.ones(nbytes // 4, dtype=torch.float32)
    dist.all_reduce(t)  # warm-up
    times = []
    user = system = 0.0
    for _ in range(iters):
        dist.barrier()
        c0 = os.times()
        t0 = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - t0)
        c1 = os.times()
        user += c1.user - c0.user
        system += c1.system - c0.system
    queue.put((rank, (times, user / iters, system / iters)))
    dist.destroy_process_group()


def main():
    world, nbytes, iters = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world, nbytes, iters, port, queue)) for r in range(world)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=600) for _ in range(world))
    for p in procs:
        p.join()
    seconds = [max(results[r][0][i] for r in range(world)) for i in range(iters)]
    user_ms = 1000 * sum(results[r][1] for r in range(world)) / world
    sys_ms = 1000 * sum(results[r][2] for r in range(world)) / world
    print(json.dumps({"world": world, "bytes": nbytes, "seconds": seconds, "user_ms": user_ms, "sys_ms": sys_ms}))


if __name__ == "__main__":
    main()
