"""Model evaluation throughput: collective_cost calls per second, and a full calculator sweep.

Prints figures; it is not a test. Run: ``python benchmarks/bench_model.py``.
"""

from __future__ import annotations

import platform
import statistics
import time

from gpucomm.model.cost import collective_cost
from gpucomm.viz.calculators.collective import DEFAULT_PATHS, cost_curves, size_grid
from gpucomm.model.tp import tp_step


def _rate(fn, repeat: int = 5, number: int = 2000) -> float:
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rates.append(number / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    print(f"machine: {platform.node()} {platform.machine()}, Python {platform.python_version()}")
    cases = {
        "collective_cost ring auto (1 node)": lambda: collective_cost("all_reduce", 2**26, num_ranks=8, link="nvlink3"),
        "collective_cost auto with NVLS": lambda: collective_cost("all_reduce", 2**26, num_ranks=8, link="nvlink4"),
        "collective_cost hierarchical (4 nodes)": lambda: collective_cost(
            "all_reduce", 2**26, num_ranks=32, link="nvlink4", num_nodes=4, network="ib_ndr"),
        "tp_step decode": lambda: tp_step("llama-3-70b", gpu="h100_sxm5", tp_size=8, link="nvlink4", phase="decode"),
    }
    for name, fn in cases.items():
        print(f"{name:<42} {_rate(fn):>12,.0f} calls/s")
    sizes = size_grid()
    start = time.perf_counter()
    for path in DEFAULT_PATHS:
        cost_curves("all_reduce", path, 8, sizes)
    elapsed = time.perf_counter() - start
    print(f"calculator curves ({len(DEFAULT_PATHS)} links x {len(sizes)} sizes): {elapsed * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
