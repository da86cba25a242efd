"""Figures of the collective cost calculator: time and busbw vs message size.

One builder serves both the static book (plotly's own slider over precomputed data,
so a reader without a kernel can explore) and the live widget (the same traces,
updated in place by :mod:`gpucomm.widgets.calculator`).
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gpucomm import GpucommError
from gpucomm.cost import collective_cost
from gpucomm.hardware import get_link
from gpucomm.units import format_size


@dataclass(frozen=True)
class Path:
    """A link as the traffic uses it: with P2P (direct) or staged through host memory."""

    link: str
    p2p: bool = True

    @property
    def label(self) -> str:
        name = get_link(self.link).name
        return name if self.p2p else f"{name}, no P2P (via host memory)"


DEFAULT_PATHS = (Path("pcie4", p2p=False), Path("pcie4"), Path("pcie5"), Path("nvlink3"), Path("nvlink4"), Path("nvlink5"))
"""Paths shown by default: the seed's PCIe 4.0 without P2P up to NVLink 5.0."""


def size_grid(min_bytes: int = 8, max_bytes: int = 16 * 2**30) -> list[int]:
    """Powers of two from ``min_bytes`` to ``max_bytes`` (nccl-tests ``-f 2``), in bytes.

    Raises
    ------
    GpucommError
        If ``min_bytes`` < 1 or ``min_bytes`` > ``max_bytes``.
    """
    if min_bytes < 1 or min_bytes > max_bytes:
        raise GpucommError(f"size range {min_bytes!r}..{max_bytes!r} bytes is not valid: expected 1 <= min <= max")
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= 2
    return sizes


def cost_curves(collective: str, path: Path, num_ranks: int, sizes: list[int]) -> tuple[list[float], list[float]]:
    """Model time (us) and busbw (GB/s) for each size: the y data of the calculator's traces."""
    costs = [collective_cost(collective, s, num_ranks=num_ranks, link=path.link, p2p=path.p2p) for s in sizes]
    return [c.time_s * 1e6 for c in costs], [c.busbw_bytes_per_s / 1e9 for c in costs]


def _size_axis(fig: go.Figure, sizes: list[int], col: int) -> None:
    ticks = [s for s in sizes if s.bit_length() % 4 == 1 or s == sizes[0]]  # every 16x, readable
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[format_size(s) for s in ticks], title_text="message size",
                     row=1, col=col)


def cost_figure(collective: str, paths: tuple[Path, ...], num_ranks: int, sizes: list[int] | None = None) -> go.Figure:
    """Time and busbw vs message size for one GPU count, one trace per path (two panels).

    Parameters
    ----------
    collective : str
        torch.distributed name of the collective.
    paths : tuple of Path
        Links to compare.
    num_ranks : int
        GPUs taking part.
    sizes : list of int, optional
        Message sizes in bytes (default: 8 B .. 16 GiB, powers of two).

    Returns
    -------
    plotly.graph_objects.Figure
        Left: time in us (log-log). Right: busbw in GB/s (1e9 B/s), per direction.
    """
    sizes = sizes or size_grid()
    fig = make_subplots(rows=1, cols=2, subplot_titles=("time per operation", "bus bandwidth (busbw)"),
                        horizontal_spacing=0.1)
    for i, path in enumerate(paths):
        time_us, busbw = cost_curves(collective, path, num_ranks, sizes)
        color = f"hsl({int(360 * i / max(len(paths), 1))},65%,45%)"
        fig.add_trace(go.Scatter(x=sizes, y=time_us, name=path.label, legendgroup=path.label, mode="lines",
                                 line=dict(color=color), hovertemplate="%{y:.3g} us<extra>%{fullData.name}</extra>"),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=sizes, y=busbw, name=path.label, legendgroup=path.label, showlegend=False,
                                 mode="lines", line=dict(color=color),
                                 hovertemplate="%{y:.3g} GB/s<extra>%{fullData.name}</extra>"), row=1, col=2)
    _size_axis(fig, sizes, 1)
    _size_axis(fig, sizes, 2)
    fig.update_yaxes(type="log", title_text="time (us)", row=1, col=1)
    fig.update_yaxes(title_text="busbw (GB/s, per direction)", rangemode="tozero", row=1, col=2)
    fig.update_layout(title=f"{collective} on {num_ranks} GPUs (model)", height=480, margin=dict(t=80, b=120),
                      legend=dict(orientation="h", y=-0.3), template="plotly_white")
    return fig


def cost_explorer_figure(collective: str = "all_reduce", paths: tuple[Path, ...] = DEFAULT_PATHS,
                         gpu_counts: tuple[int, ...] = (2, 4, 8, 16, 32, 72), initial_gpus: int = 4) -> go.Figure:
    """:func:`cost_figure` with a plotly slider over the GPU count, for static HTML.

    Every slider step carries the precomputed y data of all traces (``restyle``), so
    the figure is explorable in the built book without a kernel. Click a legend entry
    to hide or show a link.

    Raises
    ------
    GpucommError
        If ``initial_gpus`` is not one of ``gpu_counts``.
    """
    if initial_gpus not in gpu_counts:
        raise GpucommError(f"initial GPU count {initial_gpus!r} is not valid: expected one of {gpu_counts}")
    sizes = size_grid()
    fig = cost_figure(collective, paths, initial_gpus, sizes)
    steps = []
    for n in gpu_counts:
        ys = []
        for path in paths:
            time_us, busbw = cost_curves(collective, path, n, sizes)
            ys += [time_us, busbw]
        steps.append(dict(method="update", label=str(n),
                          args=[{"y": ys}, {"title.text": f"{collective} on {n} GPUs (model)"}]))
    fig.update_layout(sliders=[dict(active=gpu_counts.index(initial_gpus), steps=steps, y=-0.55, len=0.9, x=0.05,
                                    currentvalue=dict(prefix="GPUs: "), pad=dict(t=10))],
                      height=600, margin=dict(t=80, b=200))
    return fig
