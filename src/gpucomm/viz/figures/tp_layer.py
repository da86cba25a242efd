"""The tensor-parallel layer benchmark as a figure: compute vs the communication the layer waits for.

Takes the result dicts of :func:`gpucomm.measure.tp_layer.run_tp_layer` (plain dicts: no torch
needed to plot a saved result) and, optionally, model predictions of the layer time.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.units import format_size

_COMPUTE, _COMM, _MODEL, _ALONE = "#1f77b4", "#d62728", "#2ca02c", "#7f7f7f"


def _bars(label: str, r: dict) -> list[tuple[str, float, float, float]]:
    """(x label, compute, exposed communication, all_reduces alone) in ms for one result."""
    out = [(f"{label}<br>blocking", r["serial_compute_s"], max(0.0, r["serial_layer_s"] - r["serial_compute_s"]),
            r["serial_comm_s"])]
    if r.get("overlap"):
        out.append((f"{label}<br>overlapped, {r['chunks']} chunks", r["compute_s"], r["exposed_comm_s"], r["comm_s"]))
    return [(x, c * 1e3, e * 1e3, a * 1e3) for x, c, e, a in out]


def tp_layer_figure(results: Mapping[str, dict], predictions: Mapping[str, Mapping[str, float]] | None = None, *,
                    title: str | None = None) -> go.Figure:
    """Stacked bars per layer variant: compute, then the communication the layer waited for.

    Parameters
    ----------
    results : mapping of str to dict
        Label (``"MLP"``, ``"attention + MLP"``) -> result of ``run_tp_layer``. Each gives a
        "blocking" bar and, when run with ``overlap=True``, an "overlapped" bar.
    predictions : mapping of str to mapping, optional
        Label -> ``{"blocking": seconds, "overlapped": seconds}``: model layer times drawn as
        markers on the bars.
    title : str, optional
        Figure title (default: ranks, backend, dtype and the layer's shape).

    Returns
    -------
    plotly.graph_objects.Figure
        y: milliseconds per layer (the slowest rank, median over timed blocks). A grey tick
        marks the all_reduces timed alone; hover gives every number.

    Raises
    ------
    GpucommError
        If ``results`` is empty or a result lacks the timing keys.

    Examples
    --------
    >>> r = dict(serial_compute_s=0.02, serial_layer_s=0.025, serial_comm_s=0.004, overlap=True, chunks=4,
    ...          compute_s=0.021, exposed_comm_s=0.001, comm_s=0.006, num_ranks=2, backend="gloo",
    ...          dtype="float32", hidden=1024, ffn=4096, tokens=256, msg_bytes=2**18)
    >>> fig = tp_layer_figure({"MLP": r}, {"MLP": {"blocking": 0.024, "overlapped": 0.0215}})
    >>> [t.name for t in fig.data]
    ['compute', 'communication the layer waits for', 'all_reduces timed alone', 'model']
    """
    if not results:
        raise GpucommError("no tp_layer results to plot: expected {label: run_tp_layer(...)}")
    rows = []
    try:
        for label, r in results.items():
            rows += [(label, *bar) for bar in _bars(label, r)]
    except KeyError as exc:
        raise GpucommError(f"result is missing {exc.args[0]!r}: expected the dict returned by run_tp_layer") from None
    xs = [x for _, x, *_ in rows]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=xs, y=[c for *_, c, _, _ in rows], name="compute", marker_color=_COMPUTE,
                         hovertemplate="compute %{y:.2f} ms<extra></extra>"))
    fig.add_trace(go.Bar(x=xs, y=[e for *_, e, _ in rows], name="communication the layer waits for",
                         marker_color=_COMM, hovertemplate="exposed communication %{y:.2f} ms<extra></extra>"))
    fig.add_trace(go.Scatter(x=xs, y=[a for *_, a in rows], name="all_reduces timed alone", mode="markers",
                             marker=dict(symbol="line-ew-open", size=36, color=_ALONE, line=dict(width=3)),
                             hovertemplate="all_reduces alone %{y:.2f} ms<extra></extra>"))
    if predictions:
        px, py = [], []
        for label, x, *_ in rows:
            kind = "overlapped" if "overlapped" in x else "blocking"
            value = (predictions.get(label) or {}).get(kind)
            if value is not None:
                px.append(x)
                py.append(value * 1e3)
        fig.add_trace(go.Scatter(x=px, y=py, name="model", mode="markers",
                                 marker=dict(symbol="diamond", size=12, color=_MODEL, line=dict(width=1, color="black")),
                                 hovertemplate="model %{y:.2f} ms<extra></extra>"))
    first = next(iter(results.values()))
    if title is None:
        title = (f"TP layer on {first.get('num_ranks', '?')} ranks ({first.get('backend', '?')}, {first.get('dtype', '?')}): "
                 f"hidden {first.get('hidden', '?')}, ffn {first.get('ffn', '?')}, {first.get('tokens', '?')} tokens")
    fig.update_layout(barmode="stack", template="plotly_white", title=title, height=480, bargap=0.45,
                      margin=dict(t=70, b=120, l=70), legend=dict(orientation="h", y=-0.25))
    fig.update_yaxes(title_text="time per layer (ms, slowest rank)", rangemode="tozero")
    if "msg_bytes" in first:
        fig.update_xaxes(title_text=f"one all_reduce of the blocking layer: {format_size(first['msg_bytes'] * first.get('chunks', 1))}")
    return fig
