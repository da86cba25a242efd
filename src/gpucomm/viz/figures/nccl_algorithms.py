"""Figures of NCCL's tuner: every (algorithm, protocol) it weighs, its pick, and what small messages cost.

* :func:`tuner_choice_figure`: NCCL's own estimate (``ncclTopoGetAlgoTime``) for every (algorithm,
  protocol) pair it enables on a system, vs message size, with its pick marked; buttons switch between
  time and busbw (``book/nccl_algorithms.md``);
* :func:`small_message_figure`: the predicted time of a small all_reduce launched eagerly and in a CUDA
  graph, next to the custom one-shot and two-shot kernels, with the protocol NCCL picks at each size, and
  the split of NCCL's time into launch, latency and transfer (``book/small_messages.md``).

Both draw what :func:`gpucomm.model.cost.collective_cost` returns (the NCCL tuner of
:mod:`gpucomm.model.nccl_tuner` plus the terms it leaves out); no formula lives here. Cartesian traces
only: the book ships plotly's cartesian partial bundle.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gpucomm import GpucommError
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.collectives import busbw_factor, check_collective
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, as_fabric
from gpucomm.model.nccl_fabric import DEFAULT_NCCL_VERSION
from gpucomm.model.nccl_tuner import ALGORITHMS, PROTOCOLS
from gpucomm.model.units import format_size
from gpucomm.viz.calculators.collective import size_grid
from gpucomm.viz.figures._layout import color, sig, top_title

__all__ = ["ALGORITHM_LABELS", "PROTOCOL_DASH", "SMALL_MESSAGE_SERIES", "tuner_choice_figure", "small_message_figure"]

ALGORITHM_LABELS = nt.ALGORITHM_NAMES
"""How NCCL prints each algorithm (:data:`gpucomm.model.nccl_tuner.ALGORITHM_NAMES`): the legend's names."""

PROTOCOL_DASH = {"LL": "dot", "LL128": "dash", "Simple": "solid"}
"""Line style per protocol: one colour per algorithm, one dash per protocol."""

_PICK_SYMBOL = {"LL": "circle-open", "LL128": "diamond-open", "Simple": "square-open"}


def _ticks(sizes: list[int]) -> tuple[list[int], list[str]]:
    """Every 16x from the first size: readable labels on a narrow page."""
    ticks = [s for i, s in enumerate(sizes) if i % 4 == 0]
    return ticks, [format_size(t) for t in ticks]


def _label(algorithm: str, protocol: str) -> str:
    return f"{ALGORITHM_LABELS[algorithm]}/{protocol}"


def tuner_choice_figure(fabric: Fabric | str = "nvlink4", num_ranks: int = 8, *, collective: str = "all_reduce",
                        min_bytes: int = 1024, max_bytes: int = 4 * 2**30,
                        nccl_version: tuple | str = DEFAULT_NCCL_VERSION, title: str | None = None) -> go.Figure:
    """NCCL's estimate for every (algorithm, protocol) it enables, vs message size, with its pick marked.

    Parameters
    ----------
    fabric : Fabric or str
        How the GPUs are connected (a link key stands for that link through a switch, one node).
    num_ranks : int
        GPUs, all nodes together.
    collective : str
        One the tuner models: ``broadcast``, ``reduce``, ``all_gather``, ``reduce_scatter``, ``all_reduce``.
    min_bytes, max_bytes : int
        Size range in bytes (powers of two, nccl-tests ``S``).
    nccl_version : tuple or str
        The NCCL release whose tuner is followed (which pairs exist and are enabled).
    title : str, optional
        Figure title (default: collective, GPU count, link and release).

    Returns
    -------
    plotly.graph_objects.Figure
        One line per (algorithm, protocol) NCCL weighs for this communicator (colour: algorithm; dash: LL
        dotted, LL128 dashed, Simple solid), y = NCCL's own estimate ``latency + size / bandwidth`` in us
        (``CollectiveCost.alternatives``), then one marker trace "NCCL's pick" on the lowest line at each size
        (symbol by protocol, hover names the pair). Two buttons switch y between time (us) and busbw (GB/s,
        nccl-tests' definition on NCCL's estimate). Log-log.

    Raises
    ------
    GpucommError
        A collective NCCL's tuner does not model (``all_to_all``, ``send_recv``), an invalid size range, or what
        :func:`~gpucomm.model.cost.collective_cost` rejects.
    """
    check_collective(collective)
    fab = as_fabric(fabric)
    sizes = size_grid(min_bytes, max_bytes)
    costs = [collective_cost(collective, s, num_ranks=num_ranks, fabric=fab, nccl_version=nccl_version) for s in sizes]
    if not costs[0].alternatives:
        raise GpucommError(f"collective {collective!r} is not in NCCL's tuner: expected one of broadcast, reduce, "
                           "all_gather, reduce_scatter, all_reduce")
    pairs = sorted({(a, p) for c in costs for a, p, _ in c.alternatives},
                   key=lambda k: (ALGORITHMS.index(k[0]), PROTOCOLS.index(k[1])))
    factor = busbw_factor(collective, num_ranks)

    def busbw(size: int, time_s: float | None) -> float | None:
        return None if not time_s else size / time_s * factor / 1e9

    times = {k: [next((t for a, p, t in c.alternatives if (a, p) == k), None) for c in costs] for k in pairs}
    pick_t = [c.nccl_time_s for c in costs]
    y_time = [sig([t * 1e6 if t else None for t in times[k]]) for k in pairs] + [sig([t * 1e6 for t in pick_t])]
    y_bw = [sig([busbw(s, t) for s, t in zip(sizes, times[k])]) for k in pairs] \
        + [sig([busbw(s, t) for s, t in zip(sizes, pick_t)])]

    fig = go.Figure()
    algos = [a for a in ALGORITHMS if any(k[0] == a for k in pairs)]
    for i, (a, p) in enumerate(pairs):
        fig.add_trace(go.Scatter(
            x=sizes, y=y_time[i], name=_label(a, p), legendgroup=a, mode="lines",
            line=dict(color=color(algos.index(a)), dash=PROTOCOL_DASH[p], width=2),
            hovertemplate="%{y:.3g}<extra>" + _label(a, p) + "</extra>"))
    picks = [_label(c.nccl_algorithm, c.nccl_protocol) for c in costs]
    fig.add_trace(go.Scatter(
        x=sizes, y=y_time[-1], customdata=picks, name="NCCL's pick", mode="markers",
        marker=dict(symbol=[_PICK_SYMBOL[c.nccl_protocol] for c in costs], size=10, color="black", line=dict(width=2)),
        hovertemplate="%{customdata}: %{y:.3g}<extra>NCCL's pick</extra>"))
    version = costs[0].nccl_version
    text = title or f"{collective}, {num_ranks} GPUs, {fab.label}: NCCL {version}'s estimates"
    ticks, labels = _ticks(sizes)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=labels, title_text="message size (nccl-tests S)")
    fig.update_yaxes(type="log", dtick=1, title_text="NCCL's estimated time (us)")
    fig.update_layout(
        title=top_title(text), template="plotly_white", height=560, margin=dict(t=100, b=150, l=70, r=20),
        legend=dict(orientation="h", y=-0.22, x=0.0),
        updatemenus=[dict(type="buttons", direction="right", active=0, x=0.0, xanchor="left", y=1.02,
                          yanchor="bottom", showactive=True, pad=dict(t=0, b=0), buttons=[
                              dict(label="time (us)", method="update",
                                   args=[{"y": y_time}, {"yaxis.title.text": "NCCL's estimated time (us)"}]),
                              dict(label="busbw (GB/s)", method="update",
                                   args=[{"y": y_bw}, {"yaxis.title.text": "busbw on NCCL's estimate (GB/s)"}]),
                          ])])
    return fig


SMALL_MESSAGE_SERIES = (
    ("NCCL, eager launch", "auto", "eager"),
    ("NCCL, in a CUDA graph", "auto", "graph"),
    ("one-shot (custom kernel)", "one_shot", "eager"),
    ("two-shot (custom kernel)", "two_shot", "eager"),
)
"""The lines of :func:`small_message_figure`: (name, algorithm, launch mode). The custom kernels are the
alpha-beta model of :mod:`gpucomm.model.cost`, whose fitted latency holds its launch."""


def small_message_figure(fabric: Fabric | str = "nvlink4", num_ranks: int = 8, *, min_bytes: int = 1024,
                         max_bytes: int = 16 * 2**20) -> go.Figure:
    """The predicted time of a small all_reduce: NCCL eager and in a CUDA graph, one-shot, two-shot.

    Parameters
    ----------
    fabric : Fabric or str
        How the GPUs are connected (a link key stands for that link through a switch, one node).
    num_ranks : int
        GPUs (the TP group).
    min_bytes, max_bytes : int
        Size range in bytes (powers of two).

    Returns
    -------
    plotly.graph_objects.Figure
        Left: time (us) vs size, one line per :data:`SMALL_MESSAGE_SERIES`; on the eager NCCL line, markers
        name the (algorithm, protocol) NCCL picks at each size (symbol by protocol). Right: NCCL's eager time
        split into launch, latency (NCCL's estimate x the fitted scale) and transfer, as stacked bars (us).

    Raises
    ------
    GpucommError
        An invalid size range or what :func:`~gpucomm.model.cost.collective_cost` rejects (e.g. one-shot
        without P2P).
    """
    fab = as_fabric(fabric)
    sizes = size_grid(min_bytes, max_bytes)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14, column_widths=[0.58, 0.42],
                        subplot_titles=("time per call (us)", "NCCL eager, split (us)"))
    eager = None
    for i, (name, algo, launch) in enumerate(SMALL_MESSAGE_SERIES):
        costs = [collective_cost("all_reduce", s, num_ranks=num_ranks, fabric=fab, algorithm=algo, launch=launch)
                 for s in sizes]
        if algo == "auto" and launch == "eager":
            eager = costs
        fig.add_trace(go.Scatter(
            x=sizes, y=sig([c.time_s * 1e6 for c in costs]), name=name, mode="lines",
            customdata=[f"{c.algorithm}/{c.protocol}" for c in costs],
            line=dict(color=color(i), width=2.5, dash="dash" if launch == "graph" else "solid"),
            hovertemplate="%{y:.3g} us (%{customdata})<extra>" + name + "</extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=sizes, y=sig([c.time_s * 1e6 for c in eager]), name="NCCL's pick (eager)", mode="markers",
        customdata=[_label(c.nccl_algorithm, c.nccl_protocol) for c in eager],
        marker=dict(symbol=[_PICK_SYMBOL[c.nccl_protocol] for c in eager], size=10, color="black", line=dict(width=2)),
        hovertemplate="%{customdata}<extra>NCCL's pick</extra>"), row=1, col=1)
    parts = (("launch", [c.launch_s for c in eager]), ("latency", [c.latency_s for c in eager]),
             ("transfer", [c.transfer_s for c in eager]))
    labels = [format_size(s) for s in sizes]
    for j, (name, values) in enumerate(parts):
        fig.add_trace(go.Bar(x=labels, y=sig([v * 1e6 for v in values]), name=name, marker_color=color(4 + j),
                             hovertemplate="%{y:.3g} us<extra>" + name + "</extra>"), row=1, col=2)
    ticks, tick_labels = _ticks(sizes)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=tick_labels, title_text="message size", row=1, col=1)
    fig.update_xaxes(type="category", tickvals=labels[::4], title_text="message size", row=1, col=2)
    fig.update_yaxes(type="log", dtick=1, title_text="time (us)", row=1, col=1)
    fig.update_layout(
        title=top_title(f"all_reduce, {num_ranks} GPUs, {fab.label} (model)"), template="plotly_white",
        barmode="stack", height=560, margin=dict(t=80, b=170, l=70, r=20),
        legend=dict(orientation="h", y=-0.25, x=0.0, traceorder="normal"))
    return fig
