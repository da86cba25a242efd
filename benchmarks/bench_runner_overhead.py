"""How much the runner's timed loop adds over a bare ``dist.all_reduce`` loop (prints figures).

Two gloo ranks on this machine. For each size, alternately:

* bare: ``barrier; t0; for 20 iterations: dist.all_reduce(buf); t1`` on each rank;
* runner: ``gpucomm.measure.runner.measure_size`` (warm-up, barrier, the same 20-iteration block
  through the collective spec, the correctness pass outside the timed block).

Both report the time of one operation as the maximum over ranks. Each pair is repeated and
the medians are compared. Usage::

    python benchmarks/bench_runner_overhead.py [--repeats 5] [--iters 20] [--ranks 2]

Not a test: on a shared or virtual CPU the run-to-run spread is larger than the overhead.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import statistics
import time

SIZES = [2**20, 4 * 2**20, 16 * 2**20, 64 * 2**20]


def worker(rank: int, world_size: int, port: int, repeats: int, iters: int, results) -> None:
    import torch
    import torch.distributed as dist

    from gpucomm.measure.config import SweepConfig
    from gpucomm.measure.runner import max_over_ranks, measure_size
    from gpucomm.measure.spec import get_spec

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=120))
    spec = get_spec("all_reduce")
    device = torch.device("cpu")
    out = {}
    for size in SIZES:
        count = size // 4
        config = SweepConfig(min_bytes=size, max_bytes=size, iters=iters, warmup_iters=5, backend="gloo")
        buf = torch.zeros(count)
        for _ in range(5):  # the bare loop gets the same warm-up
            dist.all_reduce(buf)
        bare, runner = [], []
        for rep in range(repeats):
            for kind in (("bare", "runner") if rep % 2 == 0 else ("runner", "bare")):
                if kind == "bare":
                    dist.barrier()
                    t0 = time.perf_counter()
                    for _ in range(iters):
                        dist.all_reduce(buf)
                    bare.append(max_over_ranks((time.perf_counter() - t0) / iters, device))
                else:
                    record = measure_size(spec, config, msg_bytes=size, count=count, device=device, rank=rank,
                                          world_size=world_size)
                    runner.append(record["time_s"])
        out[size] = (bare, runner)
    if rank == 0:
        results.put(out)
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--ranks", type=int, default=2)
    args = parser.parse_args()

    from gpucomm.measure.launch import free_port
    from gpucomm.model.units import format_size

    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, args.ranks, port, args.repeats, args.iters, results))
             for r in range(args.ranks)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    out = results.get(timeout=600)
    for p in procs:
        p.join()
    print(f"gloo, {args.ranks} ranks, {args.iters} iterations per block, median of {args.repeats} repeats "
          f"(time of one all_reduce, max over ranks)")
    print(f"{'size':>8} {'bare loop':>12} {'runner':>12} {'overhead':>9}   {'bare spread':>17} {'runner spread':>17}")
    for size, (bare, runner) in out.items():
        b, r = statistics.median(bare), statistics.median(runner)
        spread = lambda xs: f"{min(xs) * 1e6:.0f}..{max(xs) * 1e6:.0f}us"  # noqa: E731
        print(f"{format_size(size):>8} {b * 1e6:10.0f}us {r * 1e6:10.0f}us {(r - b) / b:+9.1%}   "
              f"{spread(bare):>17} {spread(runner):>17}")
    print(f"wall time {time.perf_counter() - start:.1f} s")
    indirection_per_call()


def indirection_per_call(calls: int = 20000) -> None:
    """The runner's additions inside the timed loop are one Python call (``spec.run``) and one host
    clock read (the per-iteration time) per operation. Measure both where the collective is cheapest:
    one rank, 8 bytes, in this process."""
    import torch
    import torch.distributed as dist

    from gpucomm.measure.launch import free_port
    from gpucomm.measure.spec import REDUCE_OPS, get_spec

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    spec, op = get_spec("all_reduce"), REDUCE_OPS["sum"]
    buffers = spec.alloc(2, torch.float32, torch.device("cpu"), 1, rank=0, in_place=True)
    bare, runner = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            dist.all_reduce(buffers.recv, op=op)
        bare.append((time.perf_counter() - t0) / calls)
        t0 = time.perf_counter()
        marks = [t0]
        for _ in range(calls):
            spec.run(buffers, op)
            marks.append(time.perf_counter())
        runner.append((time.perf_counter() - t0) / calls)
    dist.destroy_process_group()
    b, r = min(bare), min(runner)
    print(f"1 rank, 8 B, {calls} calls (best of 5): dist.all_reduce {b * 1e6:.2f} us/call, through the runner's "
          f"spec.run and clock read {r * 1e6:.2f} us/call: {(r - b) * 1e9:+.0f} ns per operation")


if __name__ == "__main__":
    main()
