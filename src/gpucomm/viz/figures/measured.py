"""Measured sweeps as figures: busbw vs message size, with the fitted alpha-beta model.

Takes the result records of :func:`gpucomm.measure.run_sweep` or
:func:`gpucomm.measure.results.read_results` (plain dicts; no torch needed to plot a saved
sweep) and draws them against the model fitted by :func:`gpucomm.model.fit.fit_sweep`, plus any
other model curves, for example the catalog model of :mod:`gpucomm.model.cost` on GPUs
(:func:`measured_vs_model_figure`), or the per-region fits of ``gpucomm fit`` (:func:`fit_report_figure`);
and several published sweeps against the catalog model, one at a
time in a dropdown (:func:`logs_vs_model_figure`, ``book/measuring.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_tests import ParsedLog
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric
from gpucomm.model.fit import AlphaBetaFit, FitReport, fit_sweep, sweep_rows
from gpucomm.model.units import format_size, format_time, to_gb_per_s
from gpucomm.viz.figures._layout import corner_title, sig, y_from_top

#: A model curve: ``msg_bytes -> time_s`` (busbw is derived), or ``(msg_bytes, busbw_bytes_per_s)`` sequences.
ModelCurve = Callable[[float], float] | tuple[Sequence[float], Sequence[float]]

_MODEL_POINTS = 200  # points of a model curve drawn from a function: smooth at any zoom of the plot


def _size_ticks(min_bytes: int, max_bytes: int) -> list[int]:
    """Powers of two every 8x from the smallest size: about 9 readable labels for 8 B .. 64 MiB."""
    lo = max(0, math.floor(math.log2(max(min_bytes, 1))))
    hi = math.ceil(math.log2(max(max_bytes, 1)))
    return [2**e for e in range(lo, hi + 1) if (e - lo) % 3 == 0]


def _log_grid(min_bytes: float, max_bytes: float, points: int = _MODEL_POINTS) -> list[float]:
    lo, hi = math.log(min_bytes), math.log(max_bytes)
    return [math.exp(lo + (hi - lo) * i / (points - 1)) for i in range(points)]


def measured_vs_model_figure(records: Iterable[dict], model_curve: Mapping[str, ModelCurve] | None = None, *,
                             fit: AlphaBetaFit | str | None = "auto", title: str | None = None) -> go.Figure:
    """Measured bus bandwidth vs message size, with the fitted alpha-beta model and other models.

    Parameters
    ----------
    records : iterable of dict
        Result records of one sweep (``msg_bytes``, ``time_s``, ``busbw_bytes_per_s``,
        ``collective``, ``num_ranks``); a metadata record, if present, is skipped, and a
        ``SweepResults``' ``.meta`` names the backend in the title.
    model_curve : mapping of str to callable or (sizes, busbw), optional
        Extra curves, by legend label: a function ``msg_bytes -> time_s`` (for example
        ``lambda s: gpucomm.model.cost.all_reduce_time_s(s, 8, fabric="nvlink4")``), whose busbw
        ``f S / t`` is drawn over the measured range; or a pair of sequences
        ``(msg_bytes, busbw_bytes_per_s)`` drawn as given.
    fit : AlphaBetaFit or "auto" or None
        The alpha-beta curve: "auto" (default) fits :func:`gpucomm.model.fit.fit_sweep` to the
        records (skipped if they cannot be fitted, e.g. one rank); a fit to draw; or None.
    title : str, optional
        Figure title (default: collective, ranks and backend).

    Returns
    -------
    plotly.graph_objects.Figure
        x: message size in bytes on a log axis, labelled in B/KiB/MiB/GiB; y: busbw in GB/s
        (1e9 B/s, per direction). Hover shows the size, time and busbw of each point.

    Raises
    ------
    GpucommError
        If there are no result records, or they mix collectives or rank counts.

    Examples
    --------
    >>> rows = [{"collective": "all_reduce", "num_ranks": 2, "msg_bytes": s, "time_s": 1e-4 + s / 1e9,
    ...          "busbw_bytes_per_s": s / (1e-4 + s / 1e9)} for s in (8, 2**10, 2**20, 2**26)]
    >>> fig = measured_vs_model_figure(rows)
    >>> [t.name.split(":")[0] for t in fig.data]
    ['measured', 'alpha-beta fit']
    """
    rows = sorted((r for r in records if r.get("record", "result") == "result"), key=lambda r: r["msg_bytes"])
    if not rows:
        raise GpucommError("no result records to plot: expected the records of a sweep")
    kinds = {(r["collective"], r["num_ranks"]) for r in rows}
    if len(kinds) != 1:
        raise GpucommError(f"records mix collectives or rank counts {sorted(kinds)}: expected one sweep")
    (collective, num_ranks), = kinds
    meta = getattr(records, "meta", {}) or {}
    sizes = [r["msg_bytes"] for r in rows]
    lo, hi = sizes[0], sizes[-1]

    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=sizes, y=[r["busbw_bytes_per_s"] / 1e9 for r in rows], name="measured", mode="markers+lines",
        marker=dict(size=7, color="#1f77b4"), line=dict(color="#1f77b4", width=1),
        customdata=[[format_size(r["msg_bytes"]), format_time(r["time_s"])] for r in rows],
        hovertemplate="%{customdata[0]}: %{customdata[1]}, busbw %{y:.3g} GB/s<extra>measured</extra>"))

    if isinstance(fit, str):
        if fit != "auto":
            raise GpucommError(f"fit {fit!r} is not valid: expected 'auto', an AlphaBetaFit or None")
        try:
            fit = fit_sweep(rows)
        except GpucommError:
            fit = None  # e.g. one rank (no data moves) or all sizes latency-bound: plot the data alone
    grid = _log_grid(lo, hi) if hi > lo else [lo]
    if fit is not None:
        fig.add_trace(go.Scatter(
            x=grid, y=[fit.busbw_at(s) / 1e9 for s in grid], mode="lines", line=dict(color="#d62728", dash="dash"),
            name=f"alpha-beta fit: alpha = {format_time(fit.alpha_s)}, B = {fit.busbw_bytes_per_s / 1e9:.3g} GB/s",
            hovertemplate="%{y:.3g} GB/s<extra>alpha-beta fit</extra>"))

    factor = busbw_factor(collective, num_ranks)
    for i, (label, curve) in enumerate((model_curve or {}).items()):
        if callable(curve):
            xs = grid
            ys = [factor * s / curve(s) / 1e9 for s in grid]
        else:
            xs, busbw = curve
            if len(xs) != len(busbw):
                raise GpucommError(f"model curve {label!r} has {len(xs)} sizes but {len(busbw)} busbw values: "
                                   "expected the same length")
            ys = [b / 1e9 for b in busbw]
        color = ["#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"][i % 5]
        fig.add_trace(go.Scatter(x=list(xs), y=ys, mode="lines", name=label, line=dict(color=color),
                                 hovertemplate="%{y:.3g} GB/s<extra>" + label.replace("<", "&lt;") + "</extra>"))

    ticks = _size_ticks(lo, hi)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[format_size(t) for t in ticks],
                     title_text="message size per rank (binary units: 1 KiB = 1024 B)")
    fig.update_yaxes(title_text="busbw (GB/s, per direction)", rangemode="tozero")  # GB/s = 1e9 B/s
    backend = f", {meta['backend']}" if meta.get("backend") else ""
    fig.update_layout(
        title=title or f"{collective} on {num_ranks} ranks{backend}: measured busbw vs alpha-beta model",
        height=480, margin=dict(t=70, b=130, l=80), legend=dict(orientation="h", y=-0.28), template="plotly_white")
    return fig


def fit_report_figure(records: Iterable[dict], report: FitReport, *, comparison: list[dict] | None = None,
                      label: str | None = None) -> go.Figure:
    """The figure ``gpucomm fit --plot`` writes: measured busbw, the fit of each size region, and the catalog model.

    Parameters
    ----------
    records : iterable of dict
        Result records of one sweep (as for :func:`measured_vs_model_figure`).
    report : FitReport
        From :func:`gpucomm.model.fit.fit_regions`: one region is drawn as the alpha-beta fit,
        two regions as one curve each over its own sizes.
    comparison : list of dict, optional
        From :func:`gpucomm.model.fit.catalog_comparison`: its ``model_busbw_bytes_per_s`` is
        drawn at the measured sizes.
    label : str, optional
        Legend label of the comparison curve (default ``"catalog model"``).

    Returns
    -------
    plotly.graph_objects.Figure
        As :func:`measured_vs_model_figure`.

    Raises
    ------
    GpucommError
        No result records, or records that mix collectives or rank counts.
    """
    rows, _, _ = sweep_rows(records)
    curves: dict[str, ModelCurve] = {}
    if len(report.regions) == 1:
        fit = report.regions[0].fit
    else:
        fit = None
        for region in report.regions:
            sizes = [r["msg_bytes"] for r in rows if region.min_bytes <= r["msg_bytes"] <= region.max_bytes]
            grid = _log_grid(sizes[0], sizes[-1], 60) if sizes[-1] > sizes[0] else [sizes[0]]
            name = (f"fit {format_size(region.min_bytes)}-{format_size(region.max_bytes)}: alpha = "
                    f"{format_time(region.fit.alpha_s)}, B = {to_gb_per_s(region.fit.busbw_bytes_per_s):.3g} GB/s")
            curves[name] = (grid, [region.fit.busbw_at(s) for s in grid])
    if comparison:
        curves[label or "catalog model"] = ([c["msg_bytes"] for c in comparison],
                                            [c["model_busbw_bytes_per_s"] for c in comparison])
    return measured_vs_model_figure(records, curves, fit=fit)


@dataclass(frozen=True)
class LogEntry:
    """One measured sweep for :func:`logs_vs_model_figure`.

    Attributes
    ----------
    label : str
        Title; the part before the first ``:`` is the dropdown label.
    records : list of dict
        Out-of-place results (``msg_bytes``, ``busbw_bytes_per_s``, ``time_s``); see
        :meth:`gpucomm.measure.logs.nccl_tests.ParsedLog.as_results`.
    in_place : list of dict
        In-place results (may be empty).
    fabric : Fabric or str
        The measured system's GPUs and how they are connected (:func:`gpucomm.model.fabric.make_fabric`),
        or a link key; None: the entry is drawn without a model curve.
    algorithm : str
        The algorithm the measurement fixed, or ``auto`` (NCCL's choice), as
        :func:`gpucomm.model.cost.collective_cost`.
    line_rate_bytes_per_s : float or None
        A reference line (the link's nominal per-direction bandwidth), or None.
    note : str
        Shown under the title, in small print.
    """

    label: str
    records: list
    in_place: list = field(default_factory=list)
    fabric: Fabric | str | None = None
    line_rate_bytes_per_s: float | None = None
    note: str = ""
    algorithm: str = "auto"

    @classmethod
    def from_log(cls, label: str, log: ParsedLog, fabric: Fabric | str, *, algorithm: str = "auto",
                 line_rate_bytes_per_s: float | None = None, note: str = "") -> LogEntry:
        """An entry from a parsed nccl-tests log (both placements)."""
        return cls(label, log.as_results(), log.as_results(in_place=True), fabric, line_rate_bytes_per_s, note,
                   algorithm)


def logs_vs_model_figure(entries: tuple[LogEntry, ...], *, initial: int = 0, points: int = 60) -> go.Figure:
    """Measured busbw vs message size, one measured sweep at a time (dropdown), with the model overlaid.

    Parameters
    ----------
    entries : tuple of LogEntry
        The sweeps; each must hold one collective on one rank count.
    initial : int
        Index of the entry shown first.
    points : int
        Points of each model curve (log-spaced over the measured sizes).

    Returns
    -------
    plotly.graph_objects.Figure
        x: message size (log); y: busbw in GB/s (1e9 B/s, per direction). Per entry: out-of-place
        and in-place measurements, the model (:func:`gpucomm.model.cost.collective_cost`) and the line
        rate. Hover gives size, time and busbw.

    Raises
    ------
    GpucommError
        No entries, an entry without records or mixing collectives or rank counts, a bad ``initial``.
    """
    if not entries:
        raise GpucommError("no measured sweeps to plot: expected at least one LogEntry")
    if not 0 <= initial < len(entries):
        raise GpucommError(f"initial entry {initial!r} is not valid: expected 0 to {len(entries) - 1}")
    fig = go.Figure()
    slots: list[list[int]] = []
    all_sizes: list[int] = []
    for k, e in enumerate(entries):
        rows = sorted(e.records, key=lambda r: r["msg_bytes"])
        if not rows:
            raise GpucommError(f"entry {e.label!r} has no records: expected the results of a sweep")
        kinds = {(r["collective"], r["num_ranks"]) for r in rows + list(e.in_place)}
        if len(kinds) != 1:
            raise GpucommError(f"entry {e.label!r} mixes collectives or rank counts {sorted(kinds)}: expected one sweep")
        (collective, n), = kinds
        sizes = [r["msg_bytes"] for r in rows]
        all_sizes += sizes
        visible = k == initial
        mine = []
        for placement, rs, symbol, color in (("out-of-place", rows, "circle", "#1f77b4"),
                                             ("in-place", sorted(e.in_place, key=lambda r: r["msg_bytes"]),
                                              "x", "#ff7f0e")):
            if not rs:
                continue
            mine.append(len(fig.data))
            fig.add_trace(go.Scatter(
                x=[r["msg_bytes"] for r in rs], y=[round(r["busbw_bytes_per_s"] / 1e9, 6) for r in rs],
                customdata=[[format_size(r["msg_bytes"]), format_time(r["time_s"])] for r in rs],
                name=f"measured, {placement}", mode="markers+lines" if placement == "out-of-place" else "markers",
                marker=dict(symbol=symbol, size=8, color=color), line=dict(width=1, color=color), visible=visible,
                hovertemplate="%{customdata[0]}: %{customdata[1]}, busbw %{y:.3g} GB/s<extra>" + placement + "</extra>"))
        lo, hi = min(sizes), max(sizes)
        grid = sorted({int(round(math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / max(points - 1, 1))))
                       for i in range(points)}) if hi > lo else [lo]
        if e.fabric is not None:
            costs = [collective_cost(collective, s, num_ranks=n, fabric=e.fabric, algorithm=e.algorithm) for s in grid]
            mine.append(len(fig.data))
            fig.add_trace(go.Scatter(
                x=grid, y=sig([c.busbw_bytes_per_s / 1e9 for c in costs]), customdata=[c.algorithm for c in costs],
                name="model (gpucomm.model.cost)", mode="lines", line=dict(color="#2ca02c", width=3), visible=visible,
                hovertemplate="%{y:.3g} GB/s (%{customdata})<extra>model</extra>"))
        if e.line_rate_bytes_per_s:
            mine.append(len(fig.data))
            fig.add_trace(go.Scatter(
                x=[lo, hi], y=[e.line_rate_bytes_per_s / 1e9] * 2, name="link, nominal per direction", mode="lines",
                line=dict(color="black", dash="dash"), visible=visible,
                hovertemplate="%{y:.4g} GB/s<extra>nominal link</extra>"))
        slots.append(mine)

    def title(e: LogEntry) -> str:
        return e.label + (f"<br><sup>{e.note}</sup>" if e.note else "")

    def pinned(e: LogEntry) -> dict:
        return dict(corner_title(title(e)), y=0.97)

    total = len(fig.data)
    buttons = [dict(method="update", label=e.label.split(":")[0],
                    args=[{"visible": [i in slots[k] for i in range(total)]}, {"title.text": title(e)}])
               for k, e in enumerate(entries)]  # title.text only: the pinned position set below stays
    ticks = [2**p for p in range(0, 40, 3) if min(all_sizes) <= 2**p <= max(all_sizes) * 2]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[format_size(t) for t in ticks],
                     title_text="message size (binary units: 1 KiB = 1024 B)")
    fig.update_yaxes(title_text="busbw (GB/s = 1e9 B/s, per direction)", rangemode="tozero")
    height, top, bottom = 600, 150, 140
    fig.update_layout(
        title=pinned(entries[initial]), template="plotly_white", height=height, margin=dict(t=top, b=bottom),
        legend=dict(orientation="h", y=-0.25),
        updatemenus=[dict(type="dropdown", active=initial, buttons=buttons, x=0, xanchor="left",
                          y=y_from_top(72, height=height, top=top, bottom=bottom), yanchor="top")])
    return fig
