"""Fit the alpha-beta model to measured collective times (pure Python: no numpy, torch or plotly).

The model for one collective on ``n`` ranks moving ``S`` bytes is

.. math:: t(S) = \\alpha + f(n) \\, S / B

with ``alpha`` the fixed cost per operation (latency, seconds), ``B`` the bus bandwidth
(bytes/s, per direction) and ``f(n)`` the nccl-tests bus-bandwidth factor
(``2(n-1)/n`` for all_reduce, :func:`gpucomm.model.collectives.busbw_factor`). It is the ring
algorithm's cost, ``2(n-1)`` steps of ``S/n`` bytes, with the per-step latencies lumped
into ``alpha``. The measured ``busbw = f S / t`` then rises with ``S`` towards ``B``.

Evaluate a fit with :meth:`AlphaBetaFit.time_s` / :meth:`AlphaBetaFit.busbw_at`, or the
model functions :func:`gpucomm.model.cost.alpha_beta_time_s` and
:func:`alpha_beta_busbw_bytes_per_s` with explicit parameters.

:func:`fit_regions` fits a whole sweep, in two size regions where one ``(alpha, B)`` pair cannot
follow it (``gpucomm fit``), and :func:`catalog_comparison` holds every measured size against the
catalog model of :func:`gpucomm.model.cost.collective_cost`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gpucomm import GpucommError
from gpucomm.model.collectives import busbw_factor, check_collective
from gpucomm.model.cost import alpha_beta_time_s
from gpucomm.model.units import format_size, format_time, to_gb_per_s


@dataclass(frozen=True)
class AlphaBetaFit:
    """A fitted alpha-beta model for one collective and rank count.

    Attributes
    ----------
    alpha_s : float
        Fixed time per operation, seconds (>= 0).
    busbw_bytes_per_s : float
        Bus bandwidth ``B``, bytes/s: the busbw the model approaches for large messages.
    collective : str
        Collective name (torch.distributed spelling).
    num_ranks : int
        Number of ranks the times were measured on.
    num_points : int
        Measurements used.
    rms_rel_error : float
        Root-mean-square of ``(t_measured - t_model) / t_measured`` over the points.
    """

    alpha_s: float
    busbw_bytes_per_s: float
    collective: str
    num_ranks: int
    num_points: int
    rms_rel_error: float

    def time_s(self, msg_bytes: float) -> float:
        """Model time of one operation on ``msg_bytes`` bytes, seconds (:func:`gpucomm.model.cost.alpha_beta_time_s`).

        Parameters
        ----------
        msg_bytes : float
            Message size, bytes (the collective's size convention, as in the fitted sweep).

        Returns
        -------
        float
            ``alpha + f * msg_bytes / busbw`` (``f`` the collective's bus factor), seconds.
        """
        return alpha_beta_time_s(msg_bytes, alpha_s=self.alpha_s, bw_bytes_per_s=self.busbw_bytes_per_s,
                                 collective=self.collective, num_ranks=self.num_ranks)

    def busbw_at(self, msg_bytes: float) -> float:
        """Model bus bandwidth ``f S / t(S)`` at ``msg_bytes`` bytes, bytes/s.

        Parameters
        ----------
        msg_bytes : float
            Message size, bytes.

        Returns
        -------
        float
            Bus bandwidth (nccl-tests ``busbw``: the collective's bus factor times size over time), bytes/s.
        """
        return alpha_beta_busbw_bytes_per_s(msg_bytes, alpha_s=self.alpha_s, busbw_bytes_per_s=self.busbw_bytes_per_s,
                                            collective=self.collective, num_ranks=self.num_ranks)

    def __str__(self) -> str:
        return (f"{self.collective} on {self.num_ranks} ranks: alpha = {format_time(self.alpha_s)}, "
                f"B = {to_gb_per_s(self.busbw_bytes_per_s):.3g} GB/s (fit to {self.num_points} sizes, "
                f"rms relative error {self.rms_rel_error:.1%})")


def alpha_beta_busbw_bytes_per_s(msg_bytes: float, *, alpha_s: float, busbw_bytes_per_s: float, collective: str,
                                 num_ranks: int) -> float:
    """Bus bandwidth the alpha-beta model predicts at ``msg_bytes``: ``f S / t(S)``, bytes/s.

    Parameters
    ----------
    msg_bytes : float
        Message size ``S`` in bytes, as nccl-tests counts it for ``collective``.
    alpha_s : float
        Fixed cost per operation, seconds (>= 0).
    busbw_bytes_per_s : float
        Bus bandwidth ``B``, bytes/s (> 0).
    collective : str
        torch.distributed name, for the bus-bandwidth factor ``f``.
    num_ranks : int
        Number of ranks ``n``.

    Returns
    -------
    float
        bytes/s; 0 for a zero-byte message.

    Raises
    ------
    GpucommError
        On a negative latency, a non-positive bandwidth or an unknown collective.

    References
    ----------
    Busbw factor: nccl-tests ``doc/PERFORMANCE.md`` (v2.19.6). Ring cost: Thakur, Rabenseifner
    and Gropp, "Optimization of Collective Communication Operations in MPICH" (IJHPCA 2005),
    section 4 (reduce-scatter + all-gather: ``2(n-1)`` steps of ``S/n`` bytes).

    Examples
    --------
    >>> alpha_beta_busbw_bytes_per_s(2**26, alpha_s=50e-6, busbw_bytes_per_s=1e9, collective="all_reduce", num_ranks=2)
    999255496.6...
    """
    t = alpha_beta_time_s(msg_bytes, alpha_s=alpha_s, bw_bytes_per_s=busbw_bytes_per_s,
                          collective=collective, num_ranks=num_ranks)
    return busbw_factor(collective, num_ranks) * msg_bytes / t if t > 0 else 0.0


def fit_alpha_beta(msg_bytes: Sequence[float], time_s: Sequence[float], *, collective: str,
                   num_ranks: int) -> AlphaBetaFit:
    """Least-squares fit of ``t = alpha + f * S / B`` to measured times.

    Parameters
    ----------
    msg_bytes : sequence of float
        Message sizes ``S`` in bytes (nccl-tests' size for the collective).
    time_s : sequence of float
        Measured time of one operation at each size, seconds (> 0).
    collective : str
        torch.distributed name, for the bus-bandwidth factor ``f``.
    num_ranks : int
        Number of ranks the times were measured on.

    Returns
    -------
    AlphaBetaFit
        ``alpha_s`` (seconds) and ``busbw_bytes_per_s`` (bytes/s), with the fit quality.

    Raises
    ------
    GpucommError
        Fewer than two sizes, lengths that differ, a non-positive time, a factor of 0
        (e.g. all_reduce on one rank moves no data), or times that do not grow with size
        (no bandwidth term to fit).

    Notes
    -----
    The model is linear in ``alpha`` and ``beta = 1/B`` with regressor ``x = f S``. Each
    residual is divided by its measured time, i.e. the fit minimises
    ``sum(((t_i - alpha - beta x_i) / t_i)**2)`` (weights ``1/t_i**2`` in the normal
    equations): relative errors, so 8-byte latencies count as much as 64 MiB transfers
    instead of being swamped by them. If the unconstrained ``alpha`` comes out negative
    it is set to 0 and ``beta`` refitted.

    Examples
    --------
    >>> sizes = [8 * 4**k for k in range(12)]
    >>> times = [20e-6 + 1.0 * s / 100e9 for s in sizes]   # all_reduce on 2 ranks: f = 1
    >>> fit = fit_alpha_beta(sizes, times, collective="all_reduce", num_ranks=2)
    >>> round(fit.alpha_s * 1e6, 6), round(fit.busbw_bytes_per_s / 1e9, 6)
    (20.0, 100.0)
    """
    check_collective(collective)
    sizes = [float(s) for s in msg_bytes]
    times = [float(t) for t in time_s]
    if len(sizes) != len(times):
        raise GpucommError(f"msg_bytes has {len(sizes)} values but time_s has {len(times)}: expected the same length")
    if len(sizes) < 2:
        raise GpucommError(f"{len(sizes)} measurements cannot fit two parameters: expected at least 2 sizes")
    for s, t in zip(sizes, times):
        if not (s >= 0 and math.isfinite(s)):
            raise GpucommError(f"message size {s!r} bytes is not valid: expected a finite number >= 0")
        if not (t > 0 and math.isfinite(t)):
            raise GpucommError(f"time {t!r} s at {s:.0f} bytes is not valid: expected a finite number of seconds > 0")
    factor = busbw_factor(collective, num_ranks)
    if factor == 0:
        raise GpucommError(f"{collective} on {num_ranks} rank moves no data between ranks (busbw factor 0), so no "
                           "bandwidth can be fitted: expected num_ranks >= 2")
    xs = [factor * s for s in sizes]
    scale = max(xs)
    if scale == 0 or len(set(xs)) < 2:
        raise GpucommError("all measurements have the same message size: expected at least 2 different sizes")
    us = [x / scale for x in xs]  # scaled regressor in [0, 1] keeps the 2x2 system well conditioned
    ws = [1.0 / (t * t) for t in times]
    sw = sum(ws)
    su = sum(w * u for w, u in zip(ws, us))
    suu = sum(w * u * u for w, u in zip(ws, us))
    st = sum(w * t for w, t in zip(ws, times))
    sut = sum(w * u * t for w, u, t in zip(ws, us, times))
    det = sw * suu - su * su
    alpha = (suu * st - su * sut) / det if det > 0 else -1.0
    slope = (sw * sut - su * st) / det if det > 0 else 0.0
    if alpha < 0:  # latency cannot be negative: fit the bandwidth alone through the origin
        alpha, slope = 0.0, sut / suu
    if not slope > 0:
        raise GpucommError("measured times do not grow with message size, so no bandwidth can be fitted: "
                           "expected a sweep that reaches bandwidth-bound sizes (e.g. up to several MiB)")
    bw = scale / slope
    rel = [(t - (alpha + x / bw)) / t for x, t in zip(xs, times)]
    rms = math.sqrt(sum(r * r for r in rel) / len(rel))
    return AlphaBetaFit(alpha_s=alpha, busbw_bytes_per_s=bw, collective=collective, num_ranks=num_ranks,
                        num_points=len(sizes), rms_rel_error=rms)


def fit_sweep(records: Iterable[dict]) -> AlphaBetaFit:
    """Fit the alpha-beta model to a sweep's result records (``msg_bytes``, ``time_s``, ...).

    ``collective`` and ``num_ranks`` are read from the records, which must agree; each record's
    top level is its measurement (:func:`sweep_rows`).

    Parameters
    ----------
    records : iterable of dict
        Result records of one sweep (``gpucomm bench`` or ``gpucomm parse``): ``msg_bytes``, ``time_s``,
        ``collective`` and ``num_ranks`` at the top level.

    Returns
    -------
    AlphaBetaFit
        Alpha (seconds) and busbw (bytes/s) fitted by :func:`fit_alpha_beta` (least squares on relative residuals).

    Raises
    ------
    GpucommError
        If the records are empty, mix collectives or rank counts, or cannot be fitted.
    """
    rows, collective, num_ranks = sweep_rows(records)
    return _fit_rows(rows, collective, num_ranks)


# --- fits per size region, and the comparison with the catalog model ---------------------------

DEFAULT_MAX_RMS = 0.15
"""A single fit whose rms relative error is at or below this is kept as it is."""
MIN_REGION_POINTS = 3
"""Fewest sizes in a region of a split fit."""
SPLIT_GAIN = 1.5
"""A split is taken only if it cuts the rms relative error by at least this factor."""


@dataclass(frozen=True)
class Region:
    """One size range and the alpha-beta fit of its points.

    Attributes
    ----------
    min_bytes, max_bytes : int
        Smallest and largest measured size in the region, bytes.
    fit : AlphaBetaFit
        ``alpha_s`` (seconds), ``busbw_bytes_per_s`` (bytes/s) and the fit quality.
    """

    min_bytes: int
    max_bytes: int
    fit: AlphaBetaFit

    def __str__(self) -> str:
        return (f"{format_size(self.min_bytes)} to {format_size(self.max_bytes)}: alpha = {format_time(self.fit.alpha_s)}, "
                f"B = {to_gb_per_s(self.fit.busbw_bytes_per_s):.3g} GB/s (rms relative error "
                f"{self.fit.rms_rel_error:.0%} over {self.fit.num_points} sizes)")


@dataclass(frozen=True)
class FitReport:
    """What :func:`fit_regions` found.

    Attributes
    ----------
    collective : str
        Collective name (torch.distributed spelling).
    num_ranks : int
        Number of ranks of the sweep.
    single : AlphaBetaFit
        One fit over every size.
    regions : list of Region
        ``[Region(all sizes, single)]``, or two regions (small sizes, large sizes) when the
        single fit's rms relative error exceeds ``max_rms`` and a split improves it.
    split_reason : str
        Why the report has one region or two, in words.
    """

    collective: str
    num_ranks: int
    single: AlphaBetaFit
    regions: list[Region] = field(default_factory=list)
    split_reason: str = ""

    def region_for(self, msg_bytes: float) -> Region:
        """The region whose fit applies at ``msg_bytes`` (sizes between regions go to the nearer one).

        Parameters
        ----------
        msg_bytes : float
            Message size, bytes.

        Returns
        -------
        Region
            The fitted region whose size range covers ``msg_bytes``, or the nearer one between two regions.
        """
        if len(self.regions) == 1 or msg_bytes <= self.regions[0].max_bytes:
            return self.regions[0]
        if msg_bytes >= self.regions[1].min_bytes:
            return self.regions[1]
        mid = math.sqrt(self.regions[0].max_bytes * self.regions[1].min_bytes)
        return self.regions[0] if msg_bytes < mid else self.regions[1]

    def time_s(self, msg_bytes: float) -> float:
        """Model time at ``msg_bytes`` from the region that covers it, seconds.

        Parameters
        ----------
        msg_bytes : float
            Message size, bytes.

        Returns
        -------
        float
            The covering region's alpha-beta time, seconds.
        """
        return self.region_for(msg_bytes).fit.time_s(msg_bytes)

    def busbw_at(self, msg_bytes: float) -> float:
        """Model busbw at ``msg_bytes`` from the region that covers it, bytes/s.

        Parameters
        ----------
        msg_bytes : float
            Message size, bytes.

        Returns
        -------
        float
            The covering region's model busbw, bytes/s.
        """
        return self.region_for(msg_bytes).fit.busbw_at(msg_bytes)


def sweep_rows(records: Iterable[dict]) -> tuple[list[dict], str, int]:
    """The result records of one sweep, sorted by size, with its collective and rank count.

    A fit reads each record's top level (``msg_bytes``, ``time_s``, ``busbw_bytes_per_s``...):
    one measurement per size, the one its ``placement`` names, in the records of ``gpucomm bench``
    and ``gpucomm parse`` alike (their ``out_of_place`` and ``in_place`` fields hold both), and
    in records written before the placements, which have no ``placement``.

    Parameters
    ----------
    records : iterable of dict
        Result records (``collective``, ``num_ranks``, ``msg_bytes``...); metadata records
        (``"record": "meta"``) are skipped.

    Returns
    -------
    (list of dict, str, int)
        The rows by increasing ``msg_bytes``, the collective and the rank count.

    Raises
    ------
    GpucommError
        No result records, records of several collectives or rank counts, or of both placements
        at their top level (a log that lacks one placement at some sizes: ``gpucomm fit`` keeps
        the file's, :func:`gpucomm.measure.logs.nccl_tests_results.primary_records`).

    Examples
    --------
    >>> rows = [{"collective": "all_reduce", "num_ranks": 2, "msg_bytes": m, "time_s": 1e-5, "placement": "in_place",
    ...          "in_place": {"time_s": 1e-5}, "out_of_place": None} for m in (16, 8)]
    >>> [r["msg_bytes"] for r in sweep_rows(rows)[0]], sweep_rows(rows)[1:]
    ([8, 16], ('all_reduce', 2))
    """
    rows = sorted((r for r in records if r.get("record", "result") == "result"), key=lambda r: r["msg_bytes"])
    if not rows:
        raise GpucommError("no result records to fit: expected a results file from gpucomm bench --out")
    kinds = {(r.get("collective"), r.get("num_ranks")) for r in rows}
    if len(kinds) != 1:
        raise GpucommError(f"records mix collectives or rank counts {sorted(kinds, key=str)}: expected one sweep")
    placements = {r.get("placement") for r in rows} - {None}
    # gpucomm parse wrote one record per size and placement for a while (``in_place`` true or false).
    flags = {r["in_place"] for r in rows if isinstance(r.get("in_place"), bool)}
    if len(placements) > 1 or len(flags) > 1:
        raise GpucommError("records hold both placements of nccl-tests (in-place and out-of-place) at their top level: "
                           "expected one placement per sweep (gpucomm fit keeps the results file's; in Python, "
                           "gpucomm.measure.logs.nccl_tests_results.primary_records(results.meta, results))")
    (collective, num_ranks), = kinds
    return rows, collective, num_ranks


def split_wrong(records: Iterable[dict]) -> tuple[list[dict], list[dict]]:
    """Result records whose check passed or was not run, and those with wrong elements (``num_wrong`` > 0).

    A collective that returned wrong data measured something else than the collective: its time does
    not belong in a fit of the collective's cost. ``num_wrong`` is the top-level field, which sums
    both placements (``gpucomm bench``, ``gpucomm parse``): a size wrong in either is left out.

    Parameters
    ----------
    records : iterable of dict
        Result records with ``msg_bytes`` and ``num_wrong`` (None or missing: the check was not run).

    Returns
    -------
    (list of dict, list of dict)
        The records to fit, and the records with wrong elements, each by increasing ``msg_bytes``.

    Examples
    --------
    >>> good, wrong = split_wrong([{"msg_bytes": 16, "num_wrong": 3}, {"msg_bytes": 8, "num_wrong": 0},
    ...                            {"msg_bytes": 32, "num_wrong": None}])
    >>> [r["msg_bytes"] for r in good], [r["msg_bytes"] for r in wrong]
    ([8, 32], [16])
    """
    rows = sorted((r for r in records if r.get("record", "result") == "result"), key=lambda r: r["msg_bytes"])
    return [r for r in rows if not r.get("num_wrong")], [r for r in rows if r.get("num_wrong")]


def _fit_rows(rows: list[dict], collective: str, num_ranks: int) -> AlphaBetaFit:
    return fit_alpha_beta([r["msg_bytes"] for r in rows], [r["time_s"] for r in rows],
                          collective=collective, num_ranks=num_ranks)


def _sum_sq(fit: AlphaBetaFit) -> float:
    return fit.rms_rel_error ** 2 * fit.num_points


def fit_regions(records: Iterable[dict], *, max_rms: float = DEFAULT_MAX_RMS,
                min_points: int = MIN_REGION_POINTS) -> FitReport:
    """Fit alpha and beta to one sweep; split it in two size regions if a single fit is poor.

    NCCL switches protocol (LL for small messages, Simple for large ones) and a CPU falls out of
    its caches, so one ``(alpha, B)`` pair often cannot follow a whole sweep.

    Parameters
    ----------
    records : iterable of dict
        Result records of one sweep (``collective``, ``num_ranks``, ``msg_bytes``, ``time_s``,
        each record's top level: :func:`sweep_rows`); metadata records are skipped.
    max_rms : float
        A single fit with rms relative error at or below this is kept (default 0.15).
    min_points : int
        Fewest sizes in each region of a split (default 3).

    Returns
    -------
    FitReport
        The single fit and one or two :class:`Region` fits.

    Raises
    ------
    GpucommError
        No records, records of several sweeps, or sizes that cannot be fitted at all.

    Notes
    -----
    The split is the best of all splits between consecutive sizes, each side keeping at least
    ``min_points`` sizes, that both sides can fit: the one with the least total squared
    relative residual. It is kept if it cuts the rms relative error by a factor of at least
    :data:`SPLIT_GAIN` (else one region). Searching every split finds the change of regime
    without guessing where NCCL's protocol switch or the CPU's cache edge lies; the point
    where the single fit's residuals change sign is usually near it.

    Examples
    --------
    >>> rows = [{"collective": "all_reduce", "num_ranks": 2, "msg_bytes": 8 * 4**k,
    ...          "time_s": 20e-6 + 8 * 4**k / 100e9} for k in range(12)]
    >>> report = fit_regions(rows)
    >>> len(report.regions), round(report.regions[0].fit.busbw_bytes_per_s / 1e9)
    (1, 100)
    """
    rows, collective, num_ranks = sweep_rows(records)
    single = _fit_rows(rows, collective, num_ranks)
    whole = [Region(rows[0]["msg_bytes"], rows[-1]["msg_bytes"], single)]
    if single.rms_rel_error <= max_rms:
        return FitReport(collective, num_ranks, single, whole,
                         f"one region: rms relative error {single.rms_rel_error:.0%} <= {max_rms:.0%}")
    best = None
    for k in range(min_points, len(rows) - min_points + 1):
        try:
            low, high = _fit_rows(rows[:k], collective, num_ranks), _fit_rows(rows[k:], collective, num_ranks)
        except GpucommError:  # a side whose times do not grow with size: no bandwidth to fit there
            continue
        score = _sum_sq(low) + _sum_sq(high)
        if best is None or score < best[0]:
            best = (score, k, low, high)
    if best is None:
        return FitReport(collective, num_ranks, single, whole,
                         f"one region: rms relative error {single.rms_rel_error:.0%} > {max_rms:.0%}, but no split "
                         f"into two regions of >= {min_points} sizes could be fitted")
    score, k, low, high = best
    split_rms = math.sqrt(score / len(rows))
    if split_rms * SPLIT_GAIN > single.rms_rel_error:
        return FitReport(collective, num_ranks, single, whole,
                         f"one region: rms relative error {single.rms_rel_error:.0%} > {max_rms:.0%}, and the best "
                         f"split only reaches {split_rms:.0%}")
    regions = [Region(rows[0]["msg_bytes"], rows[k - 1]["msg_bytes"], low),
               Region(rows[k]["msg_bytes"], rows[-1]["msg_bytes"], high)]
    return FitReport(collective, num_ranks, single, regions,
                     f"two regions split between {format_size(rows[k - 1]['msg_bytes'])} and "
                     f"{format_size(rows[k]['msg_bytes'])}: rms relative error {single.rms_rel_error:.0%} -> "
                     f"{split_rms:.0%}")


def catalog_comparison(records: Iterable[dict], *, link: str, num_gpus: int | None = None, p2p: bool = True,
                       algorithm: str = "auto") -> list[dict]:
    """Measured busbw against the catalog model at every measured size.

    Parameters
    ----------
    records : iterable of dict
        Result records of one sweep.
    link : str
        Catalog link key (``nvlink4``, ``pcie5``...), see :func:`gpucomm.model.hardware.link_keys`.
    num_gpus : int or None
        GPUs in the model (default: the sweep's rank count). busbw is designed to be comparable
        across rank counts, so a 2-rank sweep can be held against an 8-GPU model, with care.
    p2p : bool
        False: the model stages traffic through host memory (PCIe links only).
    algorithm : str
        Passed to :func:`gpucomm.model.cost.collective_cost` (default ``auto``, as NCCL's tuner).

    Returns
    -------
    list of dict
        Per size: ``msg_bytes``, ``time_s``, ``busbw_bytes_per_s`` (measured),
        ``model_time_s``, ``model_busbw_bytes_per_s``, ``model_algorithm``, ``model_protocol``
        and ``ratio`` = measured busbw / model busbw.

    Raises
    ------
    GpucommError
        Unknown link or algorithm, or a collective/size the model does not cover.
    """
    from gpucomm.model.cost import collective_cost
    from gpucomm.model.fabric import make_fabric

    rows, collective, num_ranks = sweep_rows(records)
    n = num_ranks if num_gpus is None else num_gpus
    out = []
    for r in rows:
        cost = collective_cost(collective, r["msg_bytes"], num_ranks=n, fabric=make_fabric(link, p2p=p2p),
                               algorithm=algorithm)
        model_busbw = cost.busbw_bytes_per_s
        out.append({"msg_bytes": r["msg_bytes"], "time_s": r["time_s"], "busbw_bytes_per_s": r["busbw_bytes_per_s"],
                    "model_time_s": cost.time_s, "model_busbw_bytes_per_s": model_busbw,
                    "model_algorithm": cost.algorithm, "model_protocol": cost.protocol,
                    "ratio": r["busbw_bytes_per_s"] / model_busbw if model_busbw > 0 else math.nan})
    return out
