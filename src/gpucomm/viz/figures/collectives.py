"""Figures of collective costs: every algorithm's alpha and beta parts, all_reduce over the PCIe generations.

* :func:`algorithms_figure`: time vs size per algorithm, alpha and beta parts apart, a dropdown over the
  collective and a slider over the GPU count (``book/collectives.md``);
* :func:`pcie_allreduce_figure`: all_reduce time and busbw over PCIe 3.0-6.0 with and without P2P, a slider
  over the GPU count (``book/pcie.md``).

Every figure works in static HTML: plotly's own buttons, dropdowns and sliders switch between data
computed in advance by :func:`gpucomm.model.cost.collective_cost`; no formula lives here.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES, check_collective
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import get_link
from gpucomm.model.units import format_size
from gpucomm.viz.calculators.collective import cost_explorer_figure, size_grid
from gpucomm.viz.figures._layout import COLORS, corner_title, sig, y_from_top

__all__ = ["SHOWN_ALGORITHMS", "algorithms_figure", "PCIE_FABRICS", "pcie_allreduce_figure"]


def _size_axis_ticks(sizes: list[int], every: int = 4) -> tuple[list[int], list[str]]:
    ticks = [s for s in sizes if round(math.log2(s)) % every == round(math.log2(sizes[0])) % every]
    return ticks, [format_size(t) for t in ticks]


SHOWN_ALGORITHMS = ("ring", "tree", "rhd", "one_shot", "two_shot", "nvls", "binary_tree")
"""Algorithms drawn by :func:`algorithms_figure` (every single-node algorithm of :mod:`gpucomm.model.cost`)."""


def _algorithm_curves(collective: str, n: int, link: str, sizes: list[int]) -> tuple[list[list], list]:
    """y data for every trace slot (total, alpha, beta per algorithm, then NCCL's choice) and hover text."""
    ys: list[list] = []
    for algo in SHOWN_ALGORITHMS:
        total, alpha, beta = [], [], []
        for s in sizes:
            try:
                c = collective_cost(collective, s, num_ranks=n, fabric=link, algorithm=algo)
            except GpucommError:  # e.g. rhd on 6 ranks, an algorithm that does not implement the collective
                total.append(None), alpha.append(None), beta.append(None)
                continue
            total.append(c.time_s * 1e6)
            alpha.append(c.latency_s * 1e6)
            beta.append(c.transfer_s * 1e6 if c.transfer_s > 0 else None)
        ys += [sig(total), sig(alpha), sig(beta)]
    auto = [collective_cost(collective, s, num_ranks=n, fabric=link) for s in sizes]
    ys.append(sig([c.time_s * 1e6 for c in auto]))
    return ys, [f"{c.algorithm}/{c.protocol}" for c in auto]


def algorithms_figure(link: str = "nvlink4", *, collectives: tuple[str, ...] = COLLECTIVES,
                      gpu_counts: tuple[int, ...] = (2, 4, 8), initial_collective: str = "all_reduce",
                      initial_gpus: int = 8, min_bytes: int = 8, max_bytes: int = 16 * 2**30) -> go.Figure:
    """Time vs message size per algorithm, with the alpha (latency) and beta (bandwidth) parts drawn apart.

    Parameters
    ----------
    link : str
        Catalog link behind an NVSwitch (``nvlink4``: NVLS available).
    collectives : tuple of str
        Collectives offered by the dropdown.
    gpu_counts : tuple of int
        GPU counts offered by the slider.
    initial_collective, initial_gpus
        What the figure shows first.
    min_bytes, max_bytes : int
        Size range (powers of two).

    Returns
    -------
    plotly.graph_objects.Figure
        Left: total time (log-log) per algorithm, and NCCL's automatic choice as markers (hover
        names algorithm and protocol). Right: the alpha part (dotted) and the beta part (dashed) of
        each algorithm. The dropdown picks the collective (and installs that collective's slider);
        the slider picks the GPU count. Click a legend entry to hide an algorithm.

    Raises
    ------
    GpucommError
        Unknown link or collective; an initial value not offered.
    """
    for c in collectives:
        check_collective(c)
    if initial_collective not in collectives:
        raise GpucommError(f"initial collective {initial_collective!r} is not valid: expected one of {collectives}")
    if initial_gpus not in gpu_counts:
        raise GpucommError(f"initial GPU count {initial_gpus!r} is not valid: expected one of {gpu_counts}")
    get_link(link)
    sizes = size_grid(min_bytes, max_bytes)
    data = {(c, n): _algorithm_curves(c, n, link, sizes) for c in collectives for n in gpu_counts}
    name = get_link(link).name.split(" (")[0]

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("total time = alpha + beta", "alpha part (dotted) and beta part (dashed)"))
    ys, hover = data[(initial_collective, initial_gpus)]
    for i, algo in enumerate(SHOWN_ALGORITHMS):
        color = COLORS[i]
        fig.add_trace(go.Scatter(x=sizes, y=ys[3 * i], name=algo, legendgroup=algo, mode="lines",
                                 line=dict(color=color, width=2.5),
                                 hovertemplate="%{y:.3g} us<extra>" + algo + "</extra>"), row=1, col=1)
        fig.add_trace(go.Scatter(x=sizes, y=ys[3 * i + 1], name=f"{algo} alpha", legendgroup=algo, showlegend=False,
                                 mode="lines", line=dict(color=color, dash="dot"),
                                 hovertemplate="alpha %{y:.3g} us<extra>" + algo + "</extra>"), row=1, col=2)
        fig.add_trace(go.Scatter(x=sizes, y=ys[3 * i + 2], name=f"{algo} beta", legendgroup=algo, showlegend=False,
                                 mode="lines", line=dict(color=color, dash="dash"),
                                 hovertemplate="beta %{y:.3g} us<extra>" + algo + "</extra>"), row=1, col=2)
    fig.add_trace(go.Scatter(x=sizes, y=ys[-1], customdata=hover, name="NCCL-like choice (auto)", mode="markers",
                             marker=dict(symbol="circle-open", size=9, color="black"),
                             hovertemplate="%{y:.3g} us: %{customdata}<extra>auto</extra>"), row=1, col=1)

    def title(c: str, n: int) -> str:
        return f"{c} on {n} GPUs, {name} behind an NVSwitch (model)"

    def slider(c: str) -> dict:
        steps = [dict(method="update", label=str(n),
                      args=[{"y": data[(c, n)][0], "customdata": [None] * (3 * len(SHOWN_ALGORITHMS))
                             + [data[(c, n)][1]]}, {"title.text": title(c, n)}])
                 for n in gpu_counts]
        return dict(active=gpu_counts.index(initial_gpus), steps=steps, currentvalue=dict(prefix="GPUs: "),
                    x=0.05, len=0.9, y=-0.5, pad=dict(t=10))

    buttons = [dict(method="update", label=c,
                    args=[{"y": data[(c, initial_gpus)][0],
                           "customdata": [None] * (3 * len(SHOWN_ALGORITHMS)) + [data[(c, initial_gpus)][1]]},
                          {"title.text": title(c, initial_gpus), "sliders": [slider(c)]}])
               for c in collectives]
    ticks, labels = _size_axis_ticks(sizes, every=6)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=labels, title_text="message size (nccl-tests S)")
    # 0.1 us .. 1 s: the beta part of tiny messages (femtoseconds) would otherwise squash the axis
    fig.update_yaxes(type="log", title_text="time (us)", range=[-1, 6], row=1, col=1)
    fig.update_yaxes(type="log", title_text="time (us)", range=[-1, 6], row=1, col=2)
    height, top, bottom = 720, 150, 240
    fig.update_layout(
        title=corner_title(title(initial_collective, initial_gpus)), template="plotly_white", height=height,
        margin=dict(t=top, b=bottom), legend=dict(orientation="h", y=-0.2),
        sliders=[slider(initial_collective)],
        updatemenus=[dict(type="dropdown", active=collectives.index(initial_collective), buttons=buttons,
                          x=0, xanchor="left", y=y_from_top(48, height=height, top=top, bottom=bottom),
                          yanchor="top")])
    return fig


PCIE_FABRICS = tuple(make_fabric(f"pcie{g}", p2p=p2p) for g in (3, 4, 5, 6) for p2p in (True, False))
"""PCIe 3.0-6.0 x16, each with P2P and staged through host memory."""


def pcie_allreduce_figure(gpu_counts: tuple[int, ...] = (2, 4, 8), initial_gpus: int = 4,
                          fabrics: tuple[Fabric, ...] = PCIE_FABRICS) -> go.Figure:
    """all_reduce time and busbw vs message size over PCIe 3.0-6.0, with and without P2P, slider over GPUs.

    A thin wrapper of :func:`gpucomm.viz.calculators.collective.cost_explorer_figure` (same model, same
    slider), with the PCIe links (with and without P2P) and GPU counts of a PCIe server.

    Raises
    ------
    GpucommError
        If ``initial_gpus`` is not one of ``gpu_counts``.
    """
    fig = cost_explorer_figure("all_reduce", fabrics=fabrics, gpu_counts=gpu_counts, initial_gpus=initial_gpus)
    for trace in fig.data:  # P2P off: dotted
        if "no P2P" in (trace.name or ""):
            trace.line.dash = "dot"
    # a narrow book column: wider gap between the panels, legend and slider clear of the axes,
    # and no tick at the first size (8 B and 16 B would overlap)
    fig.update_layout(xaxis=dict(domain=[0.0, 0.42]), xaxis2=dict(domain=[0.6, 1.0]), height=760,
                      margin=dict(t=80, b=300), legend=dict(orientation="h", y=-0.32, x=0.0),
                      sliders=[dict(fig.layout.sliders[0].to_plotly_json(), y=-0.82)])
    for axis in (fig.layout.xaxis, fig.layout.xaxis2):
        if axis.tickvals:
            axis.tickvals, axis.ticktext = axis.tickvals[1:], axis.ticktext[1:]
    return fig
