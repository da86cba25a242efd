"""Model evaluation throughput: collective_cost calls per second, and a full calculator sweep.

Prints figures; it is not a test. Run: ``python benchmarks/bench_model.py``.
"""

from __future__ import annotations

import platform
import statistics
import time

from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import make_fabric
from gpucomm.model.tp import tp_step
from gpucomm.viz.calculators.collective import DEFAULT_FABRICS, cost_curves, size_grid


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
    nvlink3, nvlink4 = make_fabric("nvlink3"), make_fabric("nvlink4")
    four_nodes = make_fabric("nvlink4", num_nodes=4, network="ib_ndr")
    h100 = make_fabric("nvlink4", gpu="h100_sxm5")
    cases = {
        "collective_cost ring auto (1 node)": lambda: collective_cost("all_reduce", 2**26, num_ranks=8, fabric=nvlink3),
        "collective_cost auto with NVLS": lambda: collective_cost("all_reduce", 2**26, num_ranks=8, fabric=nvlink4),
        "collective_cost auto (4 nodes)": lambda: collective_cost("all_reduce", 2**26, num_ranks=32,
                                                                          fabric=four_nodes),
        "tp_step decode": lambda: tp_step("llama-3-70b", fabric=h100, tp_size=8, phase="decode"),
    }
    for name, fn in cases.items():
        print(f"{name:<42} {_rate(fn):>12,.0f} calls/s")
    sizes = size_grid()
    start = time.perf_counter()
    for fabric in DEFAULT_FABRICS:
        cost_curves("all_reduce", fabric, 8, sizes)
    elapsed = time.perf_counter() - start
    print(f"calculator curves ({len(DEFAULT_FABRICS)} links x {len(sizes)} sizes): {elapsed * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
