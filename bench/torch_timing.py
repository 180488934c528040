"""How the PyTorch peers (torch_compute.py, torch_gpt.py) time a piece of work: one warm-up call, then the
median of `reps` timed calls, in seconds."""
import time


def median_time(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]
