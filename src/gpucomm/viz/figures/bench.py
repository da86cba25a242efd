"""Measurements of the labs as figures: copy bandwidth by kind, and several collectives side by side.

Takes plain records (the dicts of :func:`gpucomm.measure.copy_bandwidth.measure_copy_bandwidth` and
:func:`gpucomm.measure.run_sweep`, or the same read back from their JSON-lines files), so a saved
run can be plotted without torch. Bandwidths are drawn in GB/s (1e9 B/s), per direction;
sizes on a log axis labelled in binary units.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.units import format_size, format_time

_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]


def _size_axis(fig: go.Figure, sizes: list[int], title: str) -> None:
    lo = max(0, math.floor(math.log2(max(min(sizes), 1))))
    hi = math.ceil(math.log2(max(max(sizes), 1)))
    step = max(1, math.ceil((hi - lo) / 9))  # about 9 readable labels
    ticks = [2**e for e in range(lo, hi + 1, step)]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[format_size(t) for t in ticks], title_text=title)


def _gb(bw_bytes_per_s: float) -> str:
    """GB/s for a label: 3 significant digits, no exponent ("63", "1000", "0.52")."""
    gb = bw_bytes_per_s / 1e9
    return f"{gb:.0f}" if gb >= 100 else f"{gb:.3g}"


def copy_bandwidth_figure(records: Iterable[dict], expected: Mapping[str, float | None] | None = None, *,
                          title: str | None = None) -> go.Figure:
    """Copy bandwidth vs size, one line per kind, with the catalog's expectation as a dashed line.

    Parameters
    ----------
    records : iterable of dict
        Copy records (``kind``, ``bytes``, ``time_s``, ``bw_bytes_per_s``); others are skipped.
    expected : mapping of kind to bytes/s (or None), optional
        What the catalog says each kind can reach (:func:`gpucomm.measure.copy_bandwidth.expected_copy_bw_bytes_per_s`,
        first element of each value): drawn as a dashed horizontal line in the kind's colour.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        x: bytes per copy (log, binary units); y: GB/s, bytes copied per second (log).

    Raises
    ------
    GpucommError
        If there are no copy records.

    Examples
    --------
    >>> rows = [{"record": "copy", "kind": "h2d_pinned", "bytes": s, "time_s": s / 50e9, "bw_bytes_per_s": 50e9}
    ...         for s in (2**20, 2**26)]
    >>> fig = copy_bandwidth_figure(rows, {"h2d_pinned": 63e9})
    >>> [t.name for t in fig.data]
    ['h2d_pinned', 'h2d_pinned: catalog 63 GB/s']
    """
    rows = [r for r in records if r.get("record", "copy") == "copy" and "kind" in r]
    if not rows:
        raise GpucommError("no copy records to plot: expected the records of measure_copy_bandwidth")
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    sizes = sorted({r["bytes"] for r in rows})
    fig = go.Figure()
    for i, kind in enumerate(kinds):
        color = _COLORS[i % len(_COLORS)]
        mine = sorted((r for r in rows if r["kind"] == kind), key=lambda r: r["bytes"])
        fig.add_trace(go.Scatter(
            x=[r["bytes"] for r in mine], y=[r["bw_bytes_per_s"] / 1e9 for r in mine], name=kind,
            mode="markers+lines", marker=dict(size=6, color=color), line=dict(color=color, width=1.5),
            customdata=[[format_size(r["bytes"]), format_time(r["time_s"])] for r in mine],
            hovertemplate="%{customdata[0]}: %{customdata[1]}, %{y:.3g} GB/s<extra>" + kind + "</extra>"))
        bw = (expected or {}).get(kind)
        if bw:
            fig.add_trace(go.Scatter(
                x=[sizes[0], sizes[-1]], y=[bw / 1e9, bw / 1e9], mode="lines", name=f"{kind}: catalog {_gb(bw)} GB/s",
                line=dict(color=color, dash="dash", width=1), hovertemplate="%{y:.3g} GB/s<extra>catalog</extra>"))
    _size_axis(fig, sizes, "bytes per copy (binary units: 1 KiB = 1024 B)")
    # Log scale: PCIe (tens of GB/s) and HBM (thousands) on one figure, and small copies readable.
    fig.update_yaxes(title_text="bandwidth (GB/s, bytes copied per second, log)", type="log")
    fig.update_layout(title=title or "Copy bandwidth by kind", height=480, template="plotly_white",
                      margin=dict(t=70, b=130, l=80), legend=dict(orientation="h", y=-0.28))
    return fig


def collectives_bandwidth_figure(sweeps: Mapping[str, Iterable[dict]], *, title: str | None = None) -> go.Figure:
    """busbw (and, behind a button, algbw) vs size for several collectives measured on the same ranks.

    Parameters
    ----------
    sweeps : mapping of str to records
        Label (usually the collective) -> result records of one sweep (``msg_bytes``,
        ``algbw_bytes_per_s``, ``busbw_bytes_per_s``, ``time_s``).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        busbw lines shown, algbw lines hidden; two buttons switch between them (plain plotly,
        so they work in the static book).

    Raises
    ------
    GpucommError
        If ``sweeps`` is empty or a sweep has no records.

    Examples
    --------
    >>> rec = lambda s, f: {"msg_bytes": s, "time_s": s / 1e9, "algbw_bytes_per_s": 1e9, "busbw_bytes_per_s": f * 1e9}
    >>> fig = collectives_bandwidth_figure({"broadcast": [rec(8, 1), rec(2**20, 1)],
    ...                                     "all_gather": [rec(8, .5), rec(2**20, .5)]})
    >>> [(t.name, t.visible) for t in fig.data]
    [('broadcast', True), ('all_gather', True), ('broadcast', False), ('all_gather', False)]
    """
    if not sweeps:
        raise GpucommError("no sweeps to plot: expected a mapping of collective to records")
    fig = go.Figure()
    sizes: set[int] = set()
    labels = list(sweeps)
    for what, visible in (("busbw", True), ("algbw", False)):
        for i, label in enumerate(labels):
            rows = sorted((r for r in sweeps[label] if r.get("record", "result") == "result"),
                          key=lambda r: r["msg_bytes"])
            if not rows:
                raise GpucommError(f"sweep {label!r} has no result records")
            sizes |= {r["msg_bytes"] for r in rows}
            color = _COLORS[i % len(_COLORS)]
            fig.add_trace(go.Scatter(
                x=[r["msg_bytes"] for r in rows], y=[r[f"{what}_bytes_per_s"] / 1e9 for r in rows], name=label,
                visible=visible, mode="markers+lines", marker=dict(size=6, color=color),
                line=dict(color=color, width=1.5),
                customdata=[[format_size(r["msg_bytes"]), format_time(r["time_s"])] for r in rows],
                hovertemplate="%{customdata[0]}: %{customdata[1]}, " + what + " %{y:.3g} GB/s<extra>" + label
                              + "</extra>"))
    n = len(labels)
    y_titles = {"busbw": "busbw (GB/s, per direction)", "algbw": "algbw = S / time (GB/s)"}
    buttons = [dict(label=what, method="update",
                    args=[{"visible": [j < n if what == "busbw" else j >= n for j in range(2 * n)]},
                          {"yaxis.title.text": y_titles[what]}]) for what in ("busbw", "algbw")]
    _size_axis(fig, sorted(sizes), "message size S as nccl-tests counts it (binary units)")
    fig.update_yaxes(title_text=y_titles["busbw"], rangemode="tozero")
    fig.update_layout(
        title=dict(text=title or "Collectives side by side: busbw vs algbw", x=0, xanchor="left", y=0.97),
        height=500, template="plotly_white", margin=dict(t=100, b=130, l=80), legend=dict(orientation="h", y=-0.28),
        updatemenus=[dict(type="buttons", direction="right", active=0, buttons=buttons, x=1, xanchor="right",
                          y=1.02, yanchor="bottom", showactive=True)])
    return fig


__all__ = ["copy_bandwidth_figure", "collectives_bandwidth_figure"]
