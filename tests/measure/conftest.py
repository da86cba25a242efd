"""Fixtures of the measure tests: one real 2-rank gloo run of every collective gloo has, shared by the session."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

GLOO_SWEEP = dict(min_bytes=4, max_bytes="256KiB", step_factor=8, iters=3, warmup_iters=1, backend="gloo", op="prod",
                  env={"NCCL_ALGO": "Ring", "NCCL_P2P_DISABLE": "1"})
"""The shared sweep: 4 B (one float32 element, which a chunked collective on 2 ranks rounds up to 2) to 256 KiB; ``-o
prod`` (all_reduce checks its product; the collectives that do not reduce say they ignore it) and an environment for
the ranks only (gloo ignores NCCL's variables; the metadata records them)."""


@dataclass
class GlooSweeps:
    """What :func:`gloo_sweeps` measured: each collective's records, the folder of their results files, and the
    tables the launcher printed as the sizes finished."""

    results: dict
    out_dir: Path
    printed: str


@pytest.fixture(scope="session")
def gloo_sweeps(tmp_path_factory) -> GlooSweeps:
    """Every collective gloo runs, measured once per session on 2 ranks started once (``run_sweeps``: one process
    group for all), for the runner's and the collectives' tests."""
    torch = pytest.importorskip("torch")  # noqa: F841
    from gpucomm.measure import run_sweeps
    from gpucomm.measure.config import BENCH_COLLECTIVES, UNSUPPORTED

    out_dir = tmp_path_factory.mktemp("gloo_sweeps")
    printed = io.StringIO()
    with redirect_stdout(printed):
        results = run_sweeps(2, [c for c in BENCH_COLLECTIVES if c not in UNSUPPORTED["gloo"]], out_dir=out_dir,
                             progress=False, **GLOO_SWEEP)
    return GlooSweeps(results, out_dir, printed.getvalue())
