"""A real profiler trace of an all_reduce next to compute, on local ranks: the lab of *Seeing communication in a profile*.

Each rank holds a "gradient" buffer and a matrix. One *step* is an all_reduce of the buffer and a fixed amount of
matrix multiplies, labelled ``record_function("compute")``; the whole step is ``record_function("step")``. Two
variants run in the same process group, each under its own ``torch.profiler.profile``:

* ``serial``: ``all_reduce(buf)`` returns, then the compute runs: nothing can overlap;
* ``overlapped``: ``work = all_reduce(buf, async_op=True)``, the compute, then ``work.wait()``: the collective runs on
  the backend's thread while the compute runs, as DDP's bucketed all_reduces do during the backward pass.

Each rank returns both traces as parsed Chrome-trace JSON (``export_chrome_trace``), so that
:func:`gpucomm.model.trace_overlap.overlap_summary` can read the exposed communication out of them; with
``trace_dir`` they are also written there, ``<variant>_rank<R>.json``, for Perfetto (https://ui.perfetto.dev).
On CPUs the backend is gloo and compute runs on one thread per rank (``torch.set_num_threads(1)``), so two ranks
use two cores plus gloo's threads: on a busy machine they compete, and the trace shows it.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gpucomm import GpucommError
from gpucomm.measure.harness import process_group
from gpucomm.measure.launch import launch_workers

__all__ = ["ProfileConfig", "VARIANTS", "profile_all_reduce"]

VARIANTS = ("serial", "overlapped")
"""The two step shapes, in the order they run."""


@dataclass(frozen=True)
class ProfileConfig:
    """What each rank runs (see the module docstring).

    ``msg_bytes`` (float32 elements x 4) is the all_reduce's buffer; ``matmuls`` multiplies of two ``matmul_n`` x
    ``matmul_n`` float32 matrices are the compute of one step; ``warmup_steps`` run unprofiled, then ``steps`` are
    profiled per variant; ``timeout_s`` bounds the process group and every collective.
    """

    msg_bytes: int = 8 * 2**20
    matmuls: int = 8
    matmul_n: int = 384
    steps: int = 3
    warmup_steps: int = 1
    timeout_s: float = 60.0

    def validate(self) -> ProfileConfig:
        """Check every field; return self.

        Returns
        -------
        ProfileConfig
            This configuration, unchanged.

        Raises
        ------
        GpucommError
            Naming the first field out of range and the accepted range.
        """
        limits = {"msg_bytes": (4, 2**30), "matmuls": (0, 10_000), "matmul_n": (1, 8192), "steps": (1, 100),
                  "warmup_steps": (0, 100)}
        for name, (lo, hi) in limits.items():
            value = getattr(self, name)
            if not isinstance(value, int) or not lo <= value <= hi:
                raise GpucommError(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
        if self.msg_bytes % 4:
            raise GpucommError(f"msg_bytes must be a multiple of 4 (float32 elements), got {self.msg_bytes}")
        if not self.timeout_s > 0:
            raise GpucommError(f"timeout_s must be positive, got {self.timeout_s!r}")
        return self


def _step(buf, a, config: ProfileConfig, overlapped: bool, torch, dist) -> None:
    with torch.profiler.record_function("step"):
        work = dist.all_reduce(buf, async_op=overlapped)
        if not overlapped:
            work = None
        with torch.profiler.record_function("compute"):
            for _ in range(config.matmuls):
                a @ a  # the result is not needed: the multiply is the work
        if work is not None:
            work.wait()


def _trace(prof) -> dict:
    # export_chrome_trace writes a file only; read it back and delete it at once
    fd, path = tempfile.mkstemp(prefix="gpucomm-trace-", suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        return json.loads(Path(path).read_text(encoding="utf-8"))
    finally:
        os.remove(path)


def _rank(rank: int, num_ranks: int, port: int, send, config: ProfileConfig, trace_dir: str | None) -> dict:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # one compute thread per rank: the cores the ranks share are counted
    with process_group("gloo", rank=rank, world_size=num_ranks, device=torch.device("cpu"),
                       timeout_s=config.timeout_s, init_method=f"tcp://127.0.0.1:{port}"):
        buf = torch.ones(config.msg_bytes // 4)
        a = torch.randn(config.matmul_n, config.matmul_n, generator=torch.Generator().manual_seed(rank))
        traces = {}
        for variant in VARIANTS:
            overlapped = variant == "overlapped"
            for _ in range(config.warmup_steps):
                _step(buf, a, config, overlapped, torch, dist)
            dist.barrier()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                dist.barrier()  # both ranks' profilers are running before the first step (outside the steps' window)
                for _ in range(config.steps):
                    _step(buf, a, config, overlapped, torch, dist)
            traces[variant] = _trace(prof)
            if trace_dir is not None:
                Path(trace_dir, f"{variant}_rank{rank}.json").write_text(json.dumps(traces[variant]), encoding="utf-8")
            dist.barrier()
        # the sum of ones over the ranks, after warm-up and profiled steps of both variants: the data really moved
        expected = float(num_ranks ** (2 * (config.warmup_steps + config.steps)))
        if buf[0].item() != expected:
            raise GpucommError(f"all_reduce result {buf[0].item()} on rank {rank}, expected {expected}")
    return traces


def profile_all_reduce(num_ranks: int = 2, config: ProfileConfig | None = None, *,
                       trace_dir: str | Path | None = None) -> list[dict]:
    """Profile the serial and the overlapped step on ``num_ranks`` local gloo ranks; return every rank's traces.

    Parameters
    ----------
    num_ranks : int
        Local processes, 2 to 8.
    config : ProfileConfig, optional
        What each step does (default :class:`ProfileConfig()`).
    trace_dir : str or Path, optional
        An existing directory to write ``<variant>_rank<R>.json`` into (nothing is written without it).

    Returns
    -------
    list of dict
        By rank: ``{"serial": trace, "overlapped": trace}``, each a parsed Chrome trace.

    Raises
    ------
    GpucommError
        For a bad argument (before any process starts), a rank that failed, or a wrong all_reduce result.

    Examples
    --------
    >>> traces = profile_all_reduce(2, ProfileConfig(steps=2))  # doctest: +SKIP
    >>> from gpucomm.model.trace_overlap import overlap_summary  # doctest: +SKIP
    >>> overlap_summary(traces[0]["overlapped"]).exposed_comm_s  # doctest: +SKIP
    """
    if not isinstance(num_ranks, int) or not 2 <= num_ranks <= 8:
        raise GpucommError(f"num_ranks must be an integer from 2 to 8, got {num_ranks!r}")
    config = (config or ProfileConfig()).validate()
    if trace_dir is not None and not Path(trace_dir).is_dir():
        raise GpucommError(f"trace_dir {str(trace_dir)!r} is not an existing directory")
    return launch_workers(_rank, num_ranks, (config, None if trace_dir is None else str(trace_dir)),
                          name="gpucomm-profile-rank")
