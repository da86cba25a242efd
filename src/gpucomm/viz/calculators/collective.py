"""Figures of the collective cost calculator: time and busbw vs message size.

One builder serves the static book (plotly's own slider over precomputed data, so a reader
without a kernel can explore), the live widget (the same traces, updated in place by
:mod:`gpucomm.viz.widgets.collective`) and the book's live mode in the reader's browser
(:mod:`gpucomm.viz.calculators.live`, run by Pyodide). The calculator's figure is a plain dict
(:func:`collective_spec`) that ``go.Figure`` wraps for the notebooks and ``Plotly.react`` draws in
the browser: importing this module needs no plotly, only the figure-object builders do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, make_fabric, system_fabric
from gpucomm.model.units import format_size, format_time
from gpucomm.viz.calculators.inputs import (
    FigureUpdate,
    algorithm_choices,
    check_inputs,
    collective_choices,
    link_choices,
    network_or_system_choices,
    nodes_for,
    param,
    protocol_choices,
    step_args,
    system_choices,
    update_spec,
)

if TYPE_CHECKING:  # plotly is imported where a go.Figure is built: the browser's Pyodide has no plotly
    import plotly.graph_objects as go


DEFAULT_FABRICS = tuple(make_fabric(link, p2p=p2p) for link, p2p in (
    ("pcie4", False), ("pcie4", True), ("pcie5", True), ("nvlink3", True), ("nvlink4", True), ("nvlink5", True)))
"""Links shown by default: PCIe 4.0 without P2P (the slow path of the 4x A100
measurement in Baobao Algorithm Notes' Llama-3-70B article) up to NVLink 5.0."""


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


def cost_curves(collective: str, fabric: Fabric, num_ranks: int, sizes: list[int]) -> tuple[list[float], list[float]]:
    """Model time (us) and busbw (GB/s) for each size: the y data of the calculator's traces."""
    costs = [collective_cost(collective, s, num_ranks=num_ranks, fabric=fabric) for s in sizes]
    return [c.time_s * 1e6 for c in costs], [c.busbw_bytes_per_s / 1e9 for c in costs]


def _size_axis(fig: go.Figure, sizes: list[int], col: int) -> None:
    ticks = [s for s in sizes if s.bit_length() % 4 == 1 or s == sizes[0]]  # every 16x, readable
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[format_size(s) for s in ticks], title_text="message size",
                     row=1, col=col)


def cost_figure(collective: str, fabrics: tuple[Fabric, ...], num_ranks: int, sizes: list[int] | None = None) -> go.Figure:
    """Time and busbw vs message size for one GPU count, one trace per fabric (two panels).

    Parameters
    ----------
    collective : str
        torch.distributed name of the collective.
    fabrics : tuple of Fabric
        Links (and how they are wired) to compare; each trace is named by :attr:`Fabric.label`.
    num_ranks : int
        GPUs taking part.
    sizes : list of int, optional
        Message sizes in bytes (default: 8 B .. 16 GiB, powers of two).

    Returns
    -------
    plotly.graph_objects.Figure
        Left: time in us (log-log). Right: busbw in GB/s (1e9 B/s), per direction.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    sizes = sizes or size_grid()
    fig = make_subplots(rows=1, cols=2, subplot_titles=("time per operation", "bus bandwidth (busbw)"),
                        horizontal_spacing=0.1)
    for i, fabric in enumerate(fabrics):
        time_us, busbw = cost_curves(collective, fabric, num_ranks, sizes)
        color = f"hsl({int(360 * i / max(len(fabrics), 1))},65%,45%)"
        fig.add_trace(go.Scatter(x=sizes, y=time_us, name=fabric.label, legendgroup=fabric.label, mode="lines",
                                 line=dict(color=color), hovertemplate="%{y:.3g} us<extra>%{fullData.name}</extra>"),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=sizes, y=busbw, name=fabric.label, legendgroup=fabric.label, showlegend=False,
                                 mode="lines", line=dict(color=color),
                                 hovertemplate="%{y:.3g} GB/s<extra>%{fullData.name}</extra>"), row=1, col=2)
    _size_axis(fig, sizes, 1)
    _size_axis(fig, sizes, 2)
    fig.update_yaxes(type="log", title_text="time (us)", row=1, col=1)
    fig.update_yaxes(title_text="busbw (GB/s, per direction)", rangemode="tozero", row=1, col=2)
    fig.update_layout(title=f"{collective} on {num_ranks} GPUs (model)", height=480, margin=dict(t=80, b=120),
                      legend=dict(orientation="h", y=-0.3), template="plotly_white")
    return fig


BOOK_BELOW_PLOT = dict(axis_px=80, row_px=29, width_px=500)
"""Room under the plot of the two static explorers (:func:`cost_explorer_figure`, :func:`collective_explorer_figure`) as
the book draws them at 1280x800 (Chromium, measured 2026-12-06; 688 px wide figures): the size axis' tick labels and
title reach 66 px under the plot, and the book's layout script wants its 10 px gap before the legend (else it moves the
legend and the slider as the page opens, a full redraw of the figure); a legend row is 29 px; the legend wraps as the
7 px-a-character estimate of :func:`gpucomm.viz.figures._layout.legend_rows` does at 500 px (both figures' rows: 4 and 3)."""


def cost_explorer_figure(collective: str = "all_reduce", fabrics: tuple[Fabric, ...] = DEFAULT_FABRICS,
                         gpu_counts: tuple[int, ...] = (2, 4, 8, 16, 32, 72), initial_gpus: int = 4) -> go.Figure:
    """:func:`cost_figure` with a plotly slider over the GPU count, for static HTML.

    Every slider step carries the precomputed y data of all traces (``restyle``), so
    the figure is explorable in the built book without a kernel. Click a legend entry
    to hide or show a link. A link whose largest NVLink domain holds fewer GPUs than a
    step's count (NVLink 3: 16) has no curve at that step.

    Raises
    ------
    GpucommError
        If ``initial_gpus`` is not one of ``gpu_counts``.
    """
    if initial_gpus not in gpu_counts:
        raise GpucommError(f"initial GPU count {initial_gpus!r} is not valid: expected one of {gpu_counts}")
    sizes = size_grid()
    fig = cost_figure(collective, fabrics, initial_gpus, sizes)
    steps = []
    for n in gpu_counts:
        ys = []
        for fabric in fabrics:
            most = fabric.max_gpus_per_node
            if most is not None and n > most:  # no such node: that link's curves are left out at this count
                ys += [[None] * len(sizes)] * 2
                continue
            time_us, busbw = cost_curves(collective, fabric, n, sizes)
            ys += [time_us, busbw]
        steps.append(dict(method="update", label=str(n),
                          args=[{"y": ys}, {"title.text": f"{collective} on {n} GPUs (model)"}]))
    from gpucomm.viz.figures._layout import legend_then_slider  # plotly-side helper: not in the Pyodide zip path

    below = legend_then_slider([t.name for t in fig.data if t.showlegend is not False], height=710, top=80,
                               **BOOK_BELOW_PLOT)
    fig.update_layout(sliders=[dict(active=gpu_counts.index(initial_gpus), steps=steps, y=below["slider_y"],
                                    yanchor="top", len=0.9, x=0.05, currentvalue=dict(prefix="GPUs: "), pad=dict(t=10))],
                      height=710, margin=dict(t=80, b=below["margin_b"]), legend=below["legend"])
    return fig


# --- the full collective cost explorer: inputs, model, one figure for the live widget and the static page ---



def _compare_choices() -> list[tuple[str, str]]:
    return [c for c in system_choices() if c[1] != "custom"]


def _topology_choices() -> list[tuple[str, str]]:
    from gpucomm.model.fabric import TOPOLOGIES

    return [(t, t) for t in TOPOLOGIES]


@dataclass(frozen=True)
class CostInputs:
    """Inputs of the collective cost calculator (sizes in bytes, counts of GPUs and nodes).

    ``system`` picks a catalog system (its link, P2P and NICs); ``custom`` uses ``link``,
    ``topology``, ``mesh_size`` and ``p2p`` instead. ``compare`` adds catalog systems to the
    figure, each with the same collective, algorithm and GPU count.
    """

    collective: str = param("all_reduce", label="collective", choices=collective_choices,
                            help="The operation, in torch.distributed spelling.")
    algorithm: str = param("auto", label="algorithm", choices=algorithm_choices,
                           help="auto: the cheapest algorithm NCCL would use (ring, NVLS, hierarchical).")
    protocol: str = param("auto", label="protocol", choices=protocol_choices,
                          help="auto: the cheaper of LL (low latency) and Simple (full bandwidth).")
    msg_bytes: int = param(64 * 2**20, label="size", unit="bytes", min=1, max=2**40,
                           help="Message size as nccl-tests reports it, e.g. 64MiB (1 B to 1 TiB).")
    num_ranks: int = param(8, label="GPUs", unit="GPUs", min=1, max=100_000,
                           help="GPUs taking part, over all nodes.")
    num_nodes: int = param(1, label="nodes", unit="nodes", min=1, max=12_500,
                           help="Nodes the GPUs are spread over (evenly).")
    system: str = param("dgx_h100", label="system", choices=system_choices,
                        help="A catalog system (link, P2P, NICs), or custom to choose the link yourself.")
    link: str = param("nvlink4", label="link", choices=link_choices,
                      help="custom only: each GPU's link (per direction bandwidth from the catalog).")
    topology: str = param("switch", label="topology", choices=_topology_choices,
                          help="custom only: switch (NVSwitch, PCIe tree) or a point-to-point mesh.")
    mesh_size: int = param(8, label="mesh of", unit="GPUs", min=2, max=64,
                           help="custom mesh only: GPUs wired in the mesh (each GPU's bandwidth split over the others).")
    p2p: bool = param(True, label="P2P", help="custom PCIe only: off = NCCL_P2P_DISABLE, staged through host memory.")
    network: str = param("system", label="network", choices=network_or_system_choices,
                         help="Scale-out port across nodes (default: the system's own NICs).")
    compare: tuple[str, ...] = param((), label="compare with", choices=_compare_choices,
                                     help="Catalog systems drawn next to yours (same collective and GPU count).")

    def fabric(self) -> Fabric:
        """The :class:`~gpucomm.model.fabric.Fabric` of this configuration: the catalog system's, or the custom link's.

        Raises
        ------
        GpucommError
            As :func:`gpucomm.model.fabric.system_fabric` and :func:`~gpucomm.model.fabric.make_fabric`;
            several nodes of a custom link without a network.
        """
        network = None if self.network == "system" else self.network
        if self.system != "custom":
            return system_fabric(self.system, num_nodes=self.num_nodes, network=network, num_ranks=self.num_ranks)
        if self.num_nodes > 1 and network is None:
            from gpucomm.model.hardware import NETWORKS

            raise GpucommError(f"{self.num_nodes} nodes of a custom link need a network: expected one of {', '.join(NETWORKS)}")
        return make_fabric(self.link, p2p=self.p2p, topology=self.topology, mesh_size=self.mesh_size,
                           num_nodes=self.num_nodes, network=network if self.num_nodes > 1 else None)

    @property
    def label(self) -> str:
        """Short description of the configuration: system or link, GPUs, nodes."""
        if self.system != "custom":
            from gpucomm.model.hardware import get_system

            where = get_system(self.system).name
        else:
            from gpucomm.model.hardware import get_link

            where = Fabric(get_link(self.link), p2p=self.p2p).label  # a label only: no validation here
            if self.topology == "mesh":
                where += f", mesh of {self.mesh_size}"
        nodes = f" on {self.num_nodes} nodes" if self.num_nodes > 1 else ""
        return f"{where}, {self.num_ranks} GPUs{nodes}"



CONTROL_ROWS = (("system", "collective", "algorithm", "protocol"), ("msg_bytes", "num_ranks", "num_nodes", "network"),
                ("link", "topology", "mesh_size", "p2p"), ("compare",))
"""Fields of :class:`CostInputs` per row of controls, in the live widget and in the book's live mode."""

CUSTOM_ONLY = ("link", "topology", "mesh_size", "p2p")
"""Controls that only apply to ``system="custom"``; a catalog system sets them itself."""

def cost_series(inputs: CostInputs, sizes: list[int]) -> dict[str, list[float]]:
    """The model over ``sizes`` for one configuration: the y data of one series of the explorer.

    Returns
    -------
    dict
        ``time_us``, ``alpha_us`` (latency part, the launch term included), ``beta_us`` (bandwidth part), ``busbw_gbs``,
        ``algbw_gbs`` (1 GB/s = 1e9 B/s, per direction), and the 10-90 % prediction band of the time, ``time_low_us``
        and ``time_high_us`` (:attr:`~gpucomm.model.cost.CollectiveCost.time_low_s`, ``time_high_s``), one value per
        size.

    Raises
    ------
    GpucommError
        From :func:`gpucomm.model.cost.collective_cost` (an algorithm that does not apply...).
    """
    fabric = inputs.fabric()
    out: dict[str, list[float]] = {k: [] for k in (*_SERIES_KEYS, *_BAND_KEYS)}
    for size in sizes:
        c = collective_cost(inputs.collective, size, num_ranks=inputs.num_ranks, fabric=fabric,
                            algorithm=inputs.algorithm, protocol=inputs.protocol)
        out["time_us"].append(c.time_s * 1e6)
        out["alpha_us"].append((c.latency_s + c.launch_s) * 1e6)  # the size-independent part, launch included
        out["beta_us"].append(c.transfer_s * 1e6)
        out["busbw_gbs"].append(c.busbw_bytes_per_s / 1e9)
        out["algbw_gbs"].append(c.algbw_bytes_per_s / 1e9)
        out["time_low_us"].append(c.time_low_s * 1e6)
        out["time_high_us"].append(c.time_high_s * 1e6)
    return out


_SERIES_CACHE: dict = {}
"""Recent answers of :func:`cost_series` for the explorer's figure, by (inputs without size and compare, sizes)."""

_SERIES_CACHE_SIZE = 64
"""How many series :data:`_SERIES_CACHE` keeps (the oldest goes first): a reader's recent configurations and the
systems compared with them."""


def _series(inputs: CostInputs, sizes: list[int]) -> dict[str, list[float]]:
    """:func:`cost_series`, kept for the next update: the curves do not depend on the chosen size or on the systems
    compared, so a live update that changes only those (or comes back to a configuration) reuses them."""
    key = (replace(inputs, msg_bytes=1, compare=()), tuple(sizes))
    series = _SERIES_CACHE.get(key)
    if series is None:
        series = cost_series(inputs, sizes)
        if len(_SERIES_CACHE) >= _SERIES_CACHE_SIZE:
            del _SERIES_CACHE[next(iter(_SERIES_CACHE))]
        _SERIES_CACHE[key] = series
    return {k: list(v) for k, v in series.items()}  # copies: a caller may change its lists


def cost_point(inputs: CostInputs):
    """:class:`gpucomm.model.cost.CollectiveCost` of the configuration at ``inputs.msg_bytes`` (checked inputs)."""
    check_inputs(inputs)
    return collective_cost(inputs.collective, inputs.msg_bytes, num_ranks=inputs.num_ranks, fabric=inputs.fabric(),
                           algorithm=inputs.algorithm, protocol=inputs.protocol)


_SERIES_KEYS = ("time_us", "busbw_gbs", "alpha_us", "beta_us", "algbw_gbs")
"""Order of the five traces of one series (time and busbw first: the existing tests read data[0], data[1])."""

_BAND_KEYS = ("time_low_us", "time_high_us")
"""The two traces of one series' prediction band, low then high: the high one fills down to the low one (plotly's
``fill="tonexty"`` fills to the trace before it on the same axes)."""

BAND_OPACITY = 0.15
"""Opacity of a band's shading: the curves and the other series' bands show through it."""


def _color(i: int, n: int) -> str:
    return f"hsl({int(360 * i / max(n, 1))},65%,42%)"


def _series_traces(name: str, color: str, sizes: list[int], series: dict | None, visible: bool | str = True,
                   width: float = 2.5) -> list[dict]:
    """The five scatter traces of one series, as plain dicts: time, busbw, alpha part, beta part, algbw."""
    empty = [None] * len(sizes)
    y = series or {k: empty for k in _SERIES_KEYS}
    specs = {
        "time_us": (1, dict(dash="solid"), "total", "%{y:.3g} us"),
        "busbw_gbs": (2, dict(dash="solid"), "busbw", "busbw %{y:.3g} GB/s"),
        "alpha_us": (1, dict(dash="dot"), "alpha (latency) part", "alpha %{y:.3g} us"),
        "beta_us": (1, dict(dash="dash"), "beta (bandwidth) part", "beta %{y:.3g} us"),
        "algbw_gbs": (2, dict(dash="dot"), "algbw", "algbw %{y:.3g} GB/s"),
    }
    traces = []
    for key in _SERIES_KEYS:
        col, dash, what, hover = specs[key]
        traces.append(dict(
            type="scatter", x=sizes, y=y[key], name=name if key == "time_us" else f"{name}: {what}", legendgroup=name,
            showlegend=key == "time_us", mode="lines", visible=visible, line=dict(color=color, width=width, **dash),
            hovertemplate=f"{hover}<extra>{name}</extra>", **_PANEL_AXES[col]))
    return traces


def _translucent(color: str, alpha: float = BAND_OPACITY) -> str:
    """A ``hsl(...)`` or ``#rgb``/``#rrggbb`` colour with opacity ``alpha``, as plotly reads it.

    Examples
    --------
    >>> _translucent("hsl(120,65%,42%)", 0.2), _translucent("#111", 0.5)
    ('hsla(120,65%,42%,0.2)', 'rgba(17,17,17,0.5)')
    """
    if color.startswith("hsl("):
        return f"hsla({color[4:-1]},{alpha:g})"
    digits = color.lstrip("#")
    digits = "".join(2 * d for d in digits) if len(digits) == 3 else digits
    return "rgba({},{},{},{:g})".format(*(int(digits[i:i + 2], 16) for i in (0, 2, 4)), alpha)


def _band_traces(name: str, color: str, sizes: list[int], series: dict | None, visible: bool | str = True) -> list[dict]:
    """The two traces of one series' 10-90 % time band on the time panel, as plain dicts: a line without width at
    the low end, then the high end filled down to it; grouped with the series in the legend (hidden with it), no hover
    (the band is the curve's uncertainty, not a curve of its own)."""
    empty = [None] * len(sizes)
    y = series or {k: empty for k in _BAND_KEYS}
    traces = []
    for key, end in zip(_BAND_KEYS, ("low", "high")):
        trace = dict(type="scatter", x=sizes, y=y[key], name=f"{name}: 10-90 % band ({end})", legendgroup=name,
                     showlegend=False, mode="lines", visible=visible, line=dict(width=0, color=color), hoverinfo="skip",
                     **_PANEL_AXES[1])
        if end == "high":
            trace.update(fill="tonexty", fillcolor=_translucent(color))
        traces.append(trace)
    return traces


_PANEL_AXES = {1: dict(xaxis="x", yaxis="y"), 2: dict(xaxis="x2", yaxis="y2")}
"""Axes of the left (time) and right (bandwidth) panel, as plotly names them."""

_PANEL_SPACING = 0.14
"""Gap between the two panels, as a fraction of the figure's width."""


def _explorer_layout(sizes: list[int], title: str) -> dict:
    """Layout of the two-panel figures: time (log-log) left, bandwidth right, legend below.

    The grid is what ``plotly.subplots.make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
    subplot_titles=...)`` writes (each panel ``(1 - spacing) / 2`` wide, its title an annotation
    centred above it), spelt out so that no plotly is needed to build it.
    """
    width = (1 - _PANEL_SPACING) / 2
    domains = ([0.0, width], [1 - width, 1.0])
    titles = ("time per operation", "bus and algorithm bandwidth")
    ticks = [x for x in sizes if x.bit_length() % 4 == 3]  # 1 KiB, 16 KiB, 256 KiB...: every 16x, readable
    size_axis = dict(type="log", tickvals=ticks, ticktext=[format_size(x) for x in ticks], title=dict(text="message size"))
    subplot_titles = [dict(text=text, x=(lo + hi) / 2, y=1.0, xref="paper", yref="paper", xanchor="center",
                           yanchor="bottom", showarrow=False, font=dict(size=16))
                      for text, (lo, hi) in zip(titles, domains)]
    legend_note = dict(text="solid: total time, busbw<br>dotted: alpha (latency) part, algbw<br>dashed: beta (bandwidth) part",
                       xref="paper", yref="paper", x=1, y=1.1, showarrow=False, font=dict(size=11), xanchor="right",
                       yanchor="bottom", align="left")
    return dict(
        xaxis=dict(anchor="y", domain=domains[0], **size_axis),
        yaxis=dict(anchor="x", domain=[0.0, 1.0], type="log", dtick=1, title=dict(text="time (us)")),
        xaxis2=dict(anchor="y2", domain=domains[1], **size_axis),
        yaxis2=dict(anchor="x2", domain=[0.0, 1.0], title=dict(text="GB/s, per direction"), rangemode="tozero"),
        title=dict(text=title, y=0.98, yanchor="top"), template="plotly_white", height=600,
        margin=dict(t=150, b=150), legend=dict(orientation="h", y=-0.24), annotations=subplot_titles + [legend_note])


def _time_range(series_times: list[list]) -> list[float]:
    """log10 range of the time panel: from a decade under the fastest total time to just above the slowest
    (the beta lines of tiny messages would otherwise stretch the axis over ten decades)."""
    import math

    values = [v for ys in series_times for v in ys if v]
    if not values:
        return [-1.0, 6.0]
    return [math.floor(math.log10(min(values))) - 1.0, math.log10(max(values)) + 0.3]


def _title(inputs: CostInputs) -> str:
    algo = "" if inputs.algorithm == "auto" else f", {inputs.algorithm}"
    return f"{inputs.collective}{algo}: {inputs.label} (model)"


def collective_spec(inputs: CostInputs | None = None, sizes: list[int] | None = None) -> dict:
    """Time (with its alpha and beta parts), busbw and algbw vs message size, as a plain plotly figure dict.

    What :func:`collective_figure` wraps in a ``go.Figure`` for the notebooks and what the book's live
    mode draws in the reader's browser with ``Plotly.react`` (:mod:`gpucomm.viz.calculators.live`):
    one spec, so both show the same figure. Plain Python: lists, dicts, strings and numbers; the
    layout names its template (``"plotly_white"``), which plotly.py expands and the browser takes from
    the page's precomputed figure.

    Traces, in order: the configuration's time, busbw, alpha part, beta part, algbw (five); a marker
    at ``inputs.msg_bytes`` on the time and on the busbw panel (two); then five traces for each
    system of :func:`system_choices` (the ``compare`` candidates), visible only if selected in
    ``inputs.compare``; then the 10-90 % prediction band of each series' time (two traces each, low then high,
    the high one shaded down to the low one: :attr:`~gpucomm.model.cost.CollectiveCost.time_low_s` and
    ``time_high_s``), the configuration's first, then each system's, shown with its series.
    :func:`collective_update` recomputes all of them; the live widget
    (:func:`gpucomm.viz.widgets.collective.build_cost_widget`) applies it in place.

    Parameters
    ----------
    inputs : CostInputs, optional
        Default: ``CostInputs()`` (all_reduce of 64 MiB on a DGX H100).
    sizes : list of int, optional
        Message sizes in bytes (default :func:`size_grid`).

    Returns
    -------
    dict
        ``{"data": [trace dicts], "layout": {...}}``, JSON-serialisable.

    Raises
    ------
    GpucommError
        For inputs out of range, or a configuration the model refuses.
    """
    inputs = check_inputs(inputs or CostInputs())
    sizes = sizes or size_grid()
    return update_spec(collective_skeleton(sizes), collective_update(inputs, sizes))


def collective_skeleton(sizes: list[int] | None = None) -> dict:
    """The traces and layout of :func:`collective_spec`, without data: what :func:`collective_update` fills.

    Parameters
    ----------
    sizes : list of int, optional
        Message sizes in bytes (default :func:`size_grid`): the x axes' ticks.

    Returns
    -------
    dict
        ``{"data": [trace dicts], "layout": {...}}``: every trace empty (no y values), no title.
    """
    sizes = sizes or size_grid()
    data = _series_traces("your configuration", "#111", sizes, None, width=3)
    for col, key in ((1, "time"), (2, "busbw")):
        data.append(dict(type="scatter", x=[], y=[], mode="markers", name=f"at the chosen size ({key})", showlegend=False,
                         marker=dict(size=11, color="#111", symbol="circle-open", line=dict(width=2)),
                         hovertemplate="%{y:.3g}<extra>chosen size</extra>", **_PANEL_AXES[col]))
    compare = _compare_choices()
    for i, (name, _key) in enumerate(compare):
        data += _series_traces(name, _color(i, len(compare)), sizes, None, visible=False, width=1.8)
    # the bands last: the trace indices of the curves and markers stay those the front end and the widget know
    data += _band_traces("your configuration", "#111", sizes, None)
    for i, (name, _key) in enumerate(compare):
        data += _band_traces(name, _color(i, len(compare)), sizes, None, visible=False)
    return {"data": data, "layout": _explorer_layout(sizes, "")}


_SKELETONS: dict = {}
"""One :func:`collective_skeleton` per size grid, for :func:`live_skeleton`."""


def live_skeleton(sizes: list[int] | None = None) -> dict:
    """:func:`collective_skeleton`, built once per size grid and copied as deep as
    :func:`~gpucomm.viz.calculators.inputs.update_spec` writes: new trace dicts and new top-level layout entries
    (``title``, ``yaxis``...); deeper values (line styles, the x sizes) are shared and must not be changed in place.
    What the book's live mode fills on every update (:mod:`gpucomm.viz.calculators.live`).
    """
    key = tuple(sizes or size_grid())
    if key not in _SKELETONS:
        _SKELETONS[key] = collective_skeleton(list(key))
    skeleton = _SKELETONS[key]
    return {"data": [dict(t) for t in skeleton["data"]],
            "layout": {k: dict(v) if isinstance(v, dict) else v for k, v in skeleton["layout"].items()}}


def collective_figure(inputs: CostInputs | None = None, sizes: list[int] | None = None) -> go.Figure:
    """:func:`collective_spec` as a ``go.Figure``: the figure of the live widget and of the notebooks.

    Parameters
    ----------
    inputs : CostInputs, optional
        Default: ``CostInputs()`` (all_reduce of 64 MiB on a DGX H100).
    sizes : list of int, optional
        Message sizes in bytes (default :func:`size_grid`).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    GpucommError
        For inputs out of range, or a configuration the model refuses.
    """
    import plotly.graph_objects as go

    return go.Figure(collective_spec(inputs, sizes))


def collective_update(inputs: CostInputs, sizes: list[int] | None = None) -> FigureUpdate:
    """Every trace of :func:`collective_figure` for ``inputs``: the model, ready to apply.

    Raises
    ------
    GpucommError
        For inputs out of range, or a configuration the model refuses (for example NVLS on A100).
    """
    inputs = check_inputs(inputs)
    sizes = sizes or size_grid()
    series = _series(inputs, sizes)
    point = cost_point(inputs)
    ys: list = [series[k] for k in _SERIES_KEYS] + [[point.time_s * 1e6], [point.busbw_bytes_per_s / 1e9]]
    xs: list = [sizes] * 5 + [[inputs.msg_bytes]] * 2
    visible: list = [True] * 7
    bands = [(series, True)]
    for _name, key in _compare_choices():
        other = None
        if key in inputs.compare:
            nodes = nodes_for(key, inputs.num_ranks)
            try:
                if nodes is None:
                    raise GpucommError("does not fit")
                other = _series(replace(inputs, system=key, num_nodes=nodes, network="system"), sizes)
            except GpucommError:
                other = None  # this system cannot run the configuration (no NICs, no NVLS...): not drawn
        ys += [other[k] if other else [] for k in _SERIES_KEYS]
        xs += [sizes if other else []] * 5
        visible += [other is not None] * 5
        bands.append((other, other is not None))
    for band, shown in bands:  # after every curve, as collective_skeleton orders them
        ys += [band[k] if band else [] for k in _BAND_KEYS]
        xs += [sizes if band else []] * 2
        visible += [shown] * 2
    summary = (f"{inputs.collective} of {format_size(point.msg_bytes)} on {inputs.label}: "
               f"{format_time(point.time_s)} = alpha {format_time(point.latency_s + point.launch_s)}"
               + (f" (launch {format_time(point.launch_s)} included)" if point.launch_s else "")
               + f" + beta {format_time(point.transfer_s)}; "
               f"algbw {point.algbw_bytes_per_s / 1e9:.1f} GB/s, busbw {point.busbw_bytes_per_s / 1e9:.1f} GB/s "
               f"({point.algorithm}, {point.protocol} protocol)")
    curves = 7 + 5 * len(_compare_choices())
    times = [ys[0]] + ys[7:curves:5]  # total times of the drawn series (yours, then each compared system)
    return FigureUpdate({"x": xs, "y": ys, "visible": visible}, tuple(range(len(ys))),
                        {"title.text": _title(inputs), "yaxis.range": _time_range(times)}, summary)


DEFAULT_SYSTEMS = ("pcie_8x_rtx4090", "dgx_a100", "dgx_h100", "gb200_nvl72")
"""Systems of the static explorer: PCIe without P2P, NVLink 3, NVLink 4 with NVLS, NVLink 5 in one 72-GPU domain."""

EXPLORER_SIZES = tuple(4**k * 64 for k in range(15))
"""Sizes of the static explorer: 64 B to 16 GiB in steps of 4x (half the points of :func:`size_grid`: a smaller page)."""

DEFAULT_VIEWS = (("all_reduce", "auto"), ("all_reduce", "ring"), ("all_gather", "auto"), ("all_to_all", "auto"))
"""(collective, algorithm) pairs offered by the static explorer's dropdown."""


def collective_explorer_figure(systems: tuple[str, ...] = DEFAULT_SYSTEMS,
                               views: tuple[tuple[str, str], ...] = DEFAULT_VIEWS,
                               gpu_counts: tuple[int, ...] = (2, 4, 8, 16, 64), initial_gpus: int = 8,
                               sizes: list[int] | None = None) -> go.Figure:
    """Static explorer: several catalog systems on one log-log plot, alpha and beta parts apart.

    A dropdown picks the (collective, algorithm) view; a slider picks the GPU count. Each system
    takes the fewest of its nodes that hold the GPUs (:func:`nodes_for`), so past 8 GPUs a DGX goes
    over InfiniBand while an NVL72 stays in its NVLink domain. Combinations the model does not
    cover (all_gather across nodes, a system without NICs) are left blank. Both controls only
    replay precomputed data: the figure works in static HTML, no kernel.

    Parameters
    ----------
    systems : tuple of str
        Keys of :func:`system_choices`.
    views : tuple of (collective, algorithm)
        Dropdown entries.
    gpu_counts : tuple of int
        Slider positions.
    initial_gpus : int
        The slider's starting position; one of ``gpu_counts``.
    sizes : list of int, optional
        Message sizes in bytes (default :data:`EXPLORER_SIZES`: 64 B to 16 GiB, powers of four).

    Returns
    -------
    plotly.graph_objects.Figure
        ``len(views) x len(systems) x 5`` traces (time, busbw, alpha, beta, algbw per system and view), then
        ``len(views) x len(systems) x 2``: the 10-90 % band of each time curve (low, high), in the same order.

    Raises
    ------
    GpucommError
        If ``initial_gpus`` is not in ``gpu_counts`` or a system key is not modelled.
    """
    if initial_gpus not in gpu_counts:
        raise GpucommError(f"initial GPU count {initial_gpus!r} is not valid: expected one of {gpu_counts}")
    modelled = [k for _, k in _compare_choices()]
    for key in systems:
        if key not in modelled:
            raise GpucommError(f"system {key!r} is not valid: expected one of {', '.join(modelled)}")
    from gpucomm.model.hardware import get_system

    sizes = sizes or list(EXPLORER_SIZES)

    def ys(n: int) -> list[list]:
        out, bands = [], []
        for collective, algorithm in views:
            for key in systems:
                nodes = nodes_for(key, n)
                series = None
                if nodes is not None:
                    try:
                        series = cost_series(CostInputs(collective=collective, algorithm=algorithm, num_ranks=n,
                                                        num_nodes=nodes, system=key), sizes)
                    except GpucommError:
                        series = None
                out += [series[k] if series else [None] * len(sizes) for k in _SERIES_KEYS]
                bands += [series[k] if series else [None] * len(sizes) for k in _BAND_KEYS]
        return out + bands  # the bands after every curve, in the same (view, system) order

    import plotly.graph_objects as go

    data = [trace for v, _view in enumerate(views) for i, key in enumerate(systems)
            for trace in _series_traces(get_system(key).name, _color(i, len(systems)), sizes, None, visible=v == 0)]
    curves = len(data)
    data += [trace for v, _view in enumerate(views) for i, key in enumerate(systems)
             for trace in _band_traces(get_system(key).name, _color(i, len(systems)), sizes, None, visible=v == 0)]
    traces = tuple(range(len(data)))

    def update(n: int) -> FigureUpdate:
        y = ys(n)
        return FigureUpdate({"y": y}, traces, {"title.text": f"{n} GPUs (a system's nodes added as needed; model)",
                                               "yaxis.range": _time_range(y[:curves:5])})

    steps = [dict(method="update", label=str(n), args=step_args(update(n))) for n in gpu_counts]
    initial = step_args(update(initial_gpus))
    for index, y in zip(traces, initial[0]["y"]):
        data[index]["y"] = y
    buttons = [dict(method="restyle", label=f"{c} ({a})" if a != "auto" else c,
                    args=[{"visible": [v == w for per_view in (len(systems) * 5, len(systems) * 2)
                                       for w in range(len(views)) for _ in range(per_view)]}])
               for v, (c, a) in enumerate(views)]
    fig = go.Figure({"data": data, "layout": _explorer_layout(sizes, initial[1]["title.text"])})
    fig.layout.yaxis.range = initial[1]["yaxis.range"]
    from gpucomm.viz.figures._layout import legend_then_slider  # plotly-side helper: not in the Pyodide zip path

    below = legend_then_slider([t["name"] for t in data if t.get("showlegend") is not False and t.get("visible", True)
                                is not False], height=780, top=150, **BOOK_BELOW_PLOT)
    fig.update_layout(
        height=780, margin=dict(t=150, b=below["margin_b"]), legend=below["legend"],
        updatemenus=[dict(type="dropdown", buttons=buttons, active=0, x=0, xanchor="left", y=1.1, yanchor="bottom",
                          showactive=True)],
        sliders=[dict(active=gpu_counts.index(initial_gpus), steps=steps, y=below["slider_y"], yanchor="top", len=0.9,
                      x=0.05, currentvalue=dict(prefix="GPUs: "), pad=dict(t=10))])
    return fig
