"""Time of one live update of each calculator: what a reader waits for after moving a control.

One update = what the widget's single observer does on a change: read and check the inputs,
call the model, apply the result to the ``go.FigureWidget`` inside ``batch_update()`` and write the
status line. Measured headless by setting a control (ipywidgets runs the observer synchronously),
alternating between two values so that every update recomputes. Target: under 20 ms each.
Prints figures; it is not a test. Run: ``python benchmarks/bench_calculators.py [--repeat 41]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from gpucomm.viz.widgets.calculators import (
    build_cost_widget,
    build_generations_widget,
    build_mesh_widget,
    build_tp_widget,
    build_training_widget,
)

TARGET_MS = 10.0  # the model issue: the slowest calculator update <= 10 ms median on this machine

# (name, builder, builder keyword arguments, control, two values it alternates between)
CASES = (
    ("collective cost (DGX H100, 3 systems compared)", build_cost_widget,
     {"compare": ("dgx_a100", "gb200_nvl72", "pcie_8x_rtx4090")}, "num_ranks", (4, 8)),
    ("collective cost (custom link, 2 nodes)", build_cost_widget,
     {"system": "custom", "link": "nvlink4", "num_ranks": 16, "num_nodes": 2, "network": "ib_ndr"}, "msg_bytes",
     ("64MiB", "1MiB")),
    ("TP inference (prefill + decode, speed-up, batch sweep)", build_tp_widget, {}, "batch", (8, 16)),
    ("mesh vs NVSwitch (8-GPU board)", build_mesh_widget, {}, "msg_bytes", ("128MiB", "1MiB")),
    ("interconnect generations", build_generations_widget, {}, "pcie_lanes", (16, 4)),
    ("training communication (DP/FSDP/PP/TP)", build_training_widget, {}, "num_gpus", (8, 16)),
)


def time_updates(build, kwargs: dict, control: str, values: tuple, repeat: int) -> tuple[float, float, str]:
    """(median ms, 90th percentile ms, status) of ``repeat`` updates of one calculator."""
    box = build(**kwargs)
    widget = box.controls[control]
    widget.value = values[1]  # warm-up: first calls fill caches (catalog lookups, plotly validators)
    widget.value = values[0]
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        widget.value = values[i % 2 == 0]
        times.append((time.perf_counter() - start) * 1e3)
    if "Refused" in box.status.value:
        raise RuntimeError(f"{build.__name__}: the benchmark's input was refused: {box.status.value}")
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))], box.status.value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="median time of one live calculator update")
    parser.add_argument("--repeat", type=int, default=41, help="updates per calculator (default 41)")
    args = parser.parse_args(argv)
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"one update = check inputs + model + FigureWidget.batch_update + status line; median of {args.repeat}")
    print(f"{'calculator':<56} {'median':>9} {'p90':>9}")
    worst = 0.0
    for name, build, kwargs, control, values in CASES:
        median, p90, _ = time_updates(build, kwargs, control, values, args.repeat)
        worst = max(worst, median)
        flag = "" if median < TARGET_MS else f"  over the {TARGET_MS:g} ms target"
        print(f"{name:<56} {median:>6.1f} ms {p90:>6.1f} ms{flag}")
    print(f"slowest median: {worst:.1f} ms (target {TARGET_MS:g} ms)")


if __name__ == "__main__":
    main()
