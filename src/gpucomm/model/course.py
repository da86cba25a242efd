"""Numbers the course's chapters quote about the model's accuracy, computed from the validation results.

A chapter says once where its numbers were checked ("the model is fast by a median of 25 % on A100 between
1 and 64 MiB: see Validation"); the figure comes from here, so it follows every recalibration. The validation
chapter itself lists the cases, sweeps and fits (:mod:`gpucomm.model.validation`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost, steps_and_wire_bytes
from gpucomm.model.fabric import Fabric
from gpucomm.model.hardware import Link

__all__ = ["BandError", "algorithms_for", "band_error", "protocol_bands"]


@dataclass(frozen=True)
class BandError:
    """The model's signed error over the sweep points of one kind of system and one size band."""

    median_error: float
    """Median of ``predicted / measured - 1`` over the points (negative: the model's time is short, it is fast)."""
    count: int
    """Points in the band."""
    sweeps: tuple[str, ...]
    """Ids of the sweeps the points come from, in the order of ``sweeps``."""


def band_error(results: Iterable, sweeps: Iterable, *, link: str, collective: str = "all_reduce", low_bytes: int,
               high_bytes: int, num_nodes: int = 1) -> BandError:
    """Median signed error of the model on the bundled sweeps of one link, collective and size band.

    Parameters
    ----------
    results : iterable of gpucomm.model.validation.Result
        As :func:`gpucomm.model.validation.validate` returns them; only counted time points of a sweep are used.
    sweeps : iterable of gpucomm.model.validation.Sweep
        :data:`gpucomm.model.validation.SWEEPS`: which sweep ran on which fabric.
    link : str
        Link key of the sweeps' fabric (e.g. ``"nvlink3"`` for A100).
    collective : str
        torch.distributed name (default ``"all_reduce"``).
    low_bytes, high_bytes : int
        The band, message sizes in bytes, both ends included.
    num_nodes : int
        Nodes of the sweeps' fabric (default 1: inside a node).

    Returns
    -------
    BandError
        Median of ``Result.error`` (signed), number of points, the sweeps they come from.

    Raises
    ------
    GpucommError
        If ``low_bytes`` > ``high_bytes`` or no counted point falls in the band.
    """
    if low_bytes > high_bytes:
        raise GpucommError(f"low_bytes {low_bytes} is above high_bytes {high_bytes}")
    chosen = [s.sweep_id for s in sweeps
              if s.fabric.link.key == link and s.fabric.num_nodes == num_nodes and s.collective == collective]
    points = [r for r in results if r.sweep in chosen and r.counted and r.metric == "time"
              and low_bytes <= r.msg_bytes <= high_bytes]
    if not points:
        raise GpucommError(f"no {collective} sweep point on {link} ({num_nodes} node(s)) between {low_bytes} and "
                           f"{high_bytes} bytes")
    used = tuple(s for s in chosen if any(r.sweep == s for r in points))
    return BandError(statistics.median(r.error for r in points), len(points), used)


def protocol_bands(collective: str, *, num_ranks: int, fabric: Fabric | str | Link, algorithm: str = "ring",
                   max_bytes: int = 2**34) -> list[tuple[str, int]]:
    """The protocol the model runs for ``algorithm`` at each power-of-two size, as bands: where each one starts.

    Parameters
    ----------
    collective : str
        torch.distributed name.
    num_ranks : int
        GPUs taking part.
    fabric : Fabric, str or Link
        As :func:`gpucomm.model.cost.collective_cost`.
    algorithm : str
        The algorithm, fixed (default ``"ring"``); its protocol is NCCL's choice among those it enables (LL, LL128,
        Simple), as ``collective_cost(..., algorithm=algorithm)`` gives it.
    max_bytes : int
        Largest size scanned, bytes (default 16 GiB); sizes are the powers of two from 8 B.

    Returns
    -------
    list of (str, int)
        ``(protocol, first size in bytes)`` in order of size: one entry each time the protocol changes.

    Raises
    ------
    GpucommError
        As :func:`gpucomm.model.cost.collective_cost`, or if ``max_bytes`` < 8.

    Examples
    --------
    >>> [p for p, _ in protocol_bands("all_reduce", num_ranks=8, fabric="nvlink4")][0]
    'LL'
    """
    if max_bytes < 8:
        raise GpucommError(f"max_bytes must be at least 8, got {max_bytes}")
    bands: list[tuple[str, int]] = []
    size = 8
    while size <= max_bytes:
        protocol = collective_cost(collective, size, num_ranks=num_ranks, fabric=fabric, algorithm=algorithm).protocol
        if not bands or bands[-1][0] != protocol:
            bands.append((protocol, size))
        size *= 2
    return bands


def algorithms_for(collective: str, algorithms: Iterable[str], *, num_ranks: int) -> tuple[str, ...]:
    """The algorithms of ``algorithms`` that implement ``collective`` inside a node on ``num_ranks`` GPUs.

    Parameters
    ----------
    collective : str
        torch.distributed name.
    algorithms : iterable of str
        Candidates (e.g. :data:`gpucomm.viz.figures.collectives.SHOWN_ALGORITHMS`), in the order to keep.
    num_ranks : int
        GPUs taking part.

    Returns
    -------
    tuple of str
        Those for which :func:`gpucomm.model.cost.steps_and_wire_bytes` gives steps and bytes (the others raise there).

    Examples
    --------
    >>> algorithms_for("all_reduce", ("ring", "binary_tree", "nvls"), num_ranks=8)
    ('ring', 'nvls')
    """
    kept = []
    for algorithm in algorithms:
        try:
            steps_and_wire_bytes(collective, 1, num_ranks=num_ranks, algorithm=algorithm)
        except GpucommError:
            continue
        kept.append(algorithm)
    return tuple(kept)
