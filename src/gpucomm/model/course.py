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
from gpucomm.model.hardware import Link, get_gpu, get_network, get_system
from gpucomm.model.measurements import case

__all__ = ["BandError", "CheckedOn", "algorithms_for", "band_error", "case_rows", "checked_on", "first_slower_size",
           "protocol_bands", "scale_out_bw_per_gpu_bytes_per_s", "serving_figures"]


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


TRANSPORTS = ("nvlink", "pcie", "network")
"""How the GPUs of a validation case or sweep talk: NVLink inside a node, PCIe inside a node, or across nodes."""


def _transport(fabric: Fabric) -> str:
    if fabric.num_nodes > 1:
        return "network"
    return "nvlink" if fabric.link.kind == "nvlink" else "pcie"


@dataclass(frozen=True)
class CheckedOn:
    """Where the model was checked for one kind of fabric: the measurements, and how far off it is on them."""

    transport: str
    """``nvlink``, ``pcie`` or ``network``."""
    runs: int
    """Published runs (bundled sweeps and cases) with counted points."""
    points: int
    """Measured points (sizes of a sweep, or single cases)."""
    gpus: tuple[str, ...]
    """Short GPU names of the runs (``"H100"``, ...), in order of first appearance; empty where the catalog names none."""
    median_abs_error: float
    """Median of ``|Result.error|``, a fraction: the prediction :func:`gpucomm.model.validation.validate` reports."""
    in_sample_median_abs_error: float
    """The same with every point predicted by the joint fit (``Result.fit_predicted``, where the results carry it)."""
    held_out: bool
    """True when ``Result.predicted`` is a leave-one-out prediction (refitted without the point's run)."""

    @property
    def sentence(self) -> str:
        """The clause a chapter quotes, e.g. ``"274 measured sizes of 14 published runs (A100, H100): median error 8 %
        when each run is left out of the fit"``."""
        how = "when each run is left out of the fit" if self.held_out else "in sample (every run is in the fit)"
        on = f" ({', '.join(self.gpus)})" if self.gpus else ""
        return (f"{self.points} measured points of {self.runs} published runs{on}: median error "
                f"{100 * self.median_abs_error:.0f} % {how}")


def checked_on(results: Iterable, members: Iterable, *, transport: str) -> CheckedOn:
    """How far off the model is on the bundled measurements of one transport, for a chapter's one-line pointer.

    Parameters
    ----------
    results : iterable of gpucomm.model.validation.Result
        As :func:`gpucomm.model.validation.validate` returns them; counted points only.
    members : iterable
        The validation's :data:`~gpucomm.model.validation.SWEEPS` and :data:`~gpucomm.model.validation.CASES`
        (objects with ``fabric`` and ``sweep_id`` or ``case_id``): which run was on which fabric.
    transport : {"nvlink", "pcie", "network"}
        NVLink inside a node, PCIe inside a node, or across nodes.

    Returns
    -------
    CheckedOn
        ``held_out`` is true when some point's ``predicted`` differs from its ``fit_predicted``: the results carry
        leave-one-out predictions (results without ``fit_predicted`` are in-sample ones).

    Raises
    ------
    GpucommError
        If ``transport`` is not one of :data:`TRANSPORTS`, or no counted point was measured on it.
    """
    if transport not in TRANSPORTS:
        raise GpucommError(f"transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
    sweeps, cases, gpus = set(), set(), {}
    for m in members:
        if _transport(m.fabric) != transport:
            continue
        if hasattr(m, "sweep_id"):
            sweeps.add(m.sweep_id)
        else:
            cases.add(m.case_id)
        if m.fabric.gpu:
            gpus.setdefault(get_gpu(m.fabric.gpu).name.split()[0], None)
    points = [r for r in results if r.counted and (r.sweep in sweeps if r.sweep else r.case_id in cases)]
    if not points:
        raise GpucommError(f"no counted validation point on {transport}")
    runs = {r.sweep or r.case_id for r in points}
    fit = [getattr(r, "fit_predicted", 0.0) or r.predicted for r in points]
    return CheckedOn(transport, len(runs), len(points), tuple(gpus), statistics.median(abs(r.error) for r in points),
                     statistics.median(abs(f / r.measured - 1) for f, r in zip(fit, points)),
                     any(f != r.predicted for f, r in zip(fit, points)))


def case_rows(results: Iterable, case_ids: Iterable[str]) -> list[dict]:
    """Rows of a chapter's table of published measurements against the model: the system in words, not the case id.

    Parameters
    ----------
    results : iterable of gpucomm.model.validation.Result
        As :func:`gpucomm.model.validation.validate` returns them.
    case_ids : iterable of str
        Ids of :data:`gpucomm.model.validation.CASES` (rows of the bundled ``cases.csv``), in the table's order.

    Returns
    -------
    list of dict
        One per id: ``system``, ``GPUs``, ``path`` (from ``cases.csv``), ``measured`` and ``model`` (the case's metric in
        its unit: busbw in GB/s or time in us, named in the keys) and ``model / measured``.

    Raises
    ------
    GpucommError
        If an id has no result, or ``cases.csv`` has no such row.
    """
    by_id = {r.case_id: r for r in results}
    rows = []
    for cid in case_ids:
        if cid not in by_id:
            raise GpucommError(f"no validation result for case {cid!r}")
        r, row = by_id[cid], case(cid)
        what = "busbw (GB/s)" if r.metric == "busbw" else "time (us)"
        rows.append({"system": row["hardware"], "GPUs": int(row["n_gpus"]), "path": row["interconnect"],
                     f"measured {what}": r.measured, f"model {what}": r.predicted,
                     "model / measured": r.predicted / r.measured})
    return rows


def serving_figures(estimate) -> dict:
    """The figures a chapter quotes of one serving estimate, in the units its tables print.

    Parameters
    ----------
    estimate : gpucomm.model.planning.ServingEstimate
        As :func:`gpucomm.model.planning.serving_estimate` returns it.

    Returns
    -------
    dict
        ``fits`` (``"yes"``/``"no"``), ``mem`` and ``cap`` (weights + KV cache per GPU, and the GPU's memory, GB),
        ``user`` and ``gpu`` (decode tokens/s per user and per GPU), ``comm`` (decode communication share, %),
        ``ttft`` (time to first token, ms).
    """
    return {"fits": "yes" if estimate.fits_memory else "no", "mem": estimate.mem_bytes_per_gpu / 1e9,
            "cap": estimate.gpu_mem_bytes / 1e9, "user": estimate.tokens_per_s_per_user, "gpu": estimate.tokens_per_s_per_gpu,
            "comm": 100 * estimate.decode_comm_share, "ttft": estimate.time_to_first_token_s * 1e3}


def scale_out_bw_per_gpu_bytes_per_s(system: str) -> float:
    """One GPU's share of its system's scale-out NICs, per direction, nominal (no efficiency applied).

    Parameters
    ----------
    system : str
        Key of :data:`gpucomm.model.hardware.SYSTEMS` with NICs (``"dgx_h100"``, ``"gb200_nvl72"``, ...).

    Returns
    -------
    float
        Bytes/s: the NIC's rate x NICs per system / GPUs per system.

    Raises
    ------
    GpucommError
        If the system is unknown or has no scale-out NIC in the catalog.

    Examples
    --------
    >>> scale_out_bw_per_gpu_bytes_per_s("dgx_h100") / 1e9
    50.0
    """
    spec = get_system(system)
    if not spec.nic_key or not spec.num_nics:
        raise GpucommError(f"system {system!r} has no scale-out NIC in the catalog")
    return get_network(spec.nic_key).bw_bytes_per_s * spec.num_nics / spec.num_gpus


def first_slower_size(collective: str, algorithm: str, *, than: str = "auto", num_ranks: int, fabric: Fabric | str | Link,
                      min_bytes: int = 2**10, max_bytes: int = 2**26) -> int:
    """The smallest power-of-two size at which ``algorithm`` takes longer than ``than``: where it stops winning.

    Parameters
    ----------
    collective : str
        torch.distributed name.
    algorithm, than : str
        The two algorithms compared, as :func:`gpucomm.model.cost.collective_cost` takes them (``than="auto"``: NCCL's
        own choice at each size).
    num_ranks : int
        GPUs taking part.
    fabric : Fabric, str or Link
        As :func:`gpucomm.model.cost.collective_cost`.
    min_bytes, max_bytes : int
        The sizes scanned, bytes: the powers of two from ``min_bytes`` (rounded up to one) to ``max_bytes``.

    Returns
    -------
    int
        Bytes.

    Raises
    ------
    GpucommError
        If ``algorithm`` is not slower at any scanned size, or as :func:`gpucomm.model.cost.collective_cost`.

    Examples
    --------
    >>> first_slower_size("all_reduce", "one_shot", than="two_shot", num_ranks=8, fabric="nvlink4") < 2**26
    True
    """
    size = 1 << max(0, (min_bytes - 1).bit_length())
    while size <= max_bytes:
        mine = collective_cost(collective, size, num_ranks=num_ranks, fabric=fabric, algorithm=algorithm).time_s
        other = collective_cost(collective, size, num_ranks=num_ranks, fabric=fabric, algorithm=than).time_s
        if mine > other:
            return size
        size *= 2
    raise GpucommError(f"{algorithm} is not slower than {than} at any size from {min_bytes} to {max_bytes} bytes")
