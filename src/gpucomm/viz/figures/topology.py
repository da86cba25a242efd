"""Figures of how GPUs are wired: point-to-point mesh vs NVSwitch, and an ``nvidia-smi topo -m`` matrix.

* :func:`mesh_vs_switch_figure`: bandwidth per GPU and all_reduce time vs the number of GPUs talking,
  point-to-point mesh vs NVSwitch (``book/nvswitch.md``);
* :func:`topo_matrix_figure`: a parsed ``nvidia-smi topo -m`` as a heatmap of path classes (``book/pcie.md``,
  ``labs/topology.ipynb``).

Static HTML: buttons and dropdowns replay data computed in advance by the model
(:mod:`gpucomm.model.cost`) or the parser (:mod:`gpucomm.measure.topology`).
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gpucomm import GpucommError
from gpucomm.measure.topology import TopoMatrix, describe_cell
from gpucomm.model.cost import collective_cost, pair_bw_bytes_per_s, per_gpu_bw_bytes_per_s
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import get_link
from gpucomm.model.units import format_size
from gpucomm.viz.figures._layout import COLORS, corner_title, menu, sig, top_title, y_from_top

__all__ = ["mesh_vs_switch_figure", "topo_matrix_figure"]


def mesh_vs_switch_figure(link: str = "nvlink4", *, mesh_size: int = 8,
                          sizes: tuple[int, ...] = (16 * 2**10, 2**20, 64 * 2**20, 2**30),
                          initial_size: int = 64 * 2**20) -> go.Figure:
    """Bandwidth per GPU and all_reduce time vs the number of GPUs talking: point-to-point mesh vs NVSwitch.

    Parameters
    ----------
    link : str
        Each GPU's NVLink (catalog key); the mesh splits it into ``mesh_size - 1`` equal peer links.
    mesh_size : int
        GPUs on the board (8 in NVIDIA's example).
    sizes : tuple of int
        all_reduce message sizes in bytes offered by the buttons.
    initial_size : int
        The size shown first; one of ``sizes``.

    Returns
    -------
    plotly.graph_objects.Figure
        Left: GB/s per direction (1e9 B/s) vs GPUs: nominal pair bandwidth and the effective
        bandwidth a GPU can use in a collective (:func:`gpucomm.model.cost.pair_bw_bytes_per_s`,
        :func:`gpucomm.model.cost.per_gpu_bw_bytes_per_s`). Right: all_reduce time (model, NCCL-like
        algorithm choice) vs GPUs; buttons switch the message size.

    Raises
    ------
    GpucommError
        Unknown link, ``mesh_size`` < 2, or ``initial_size`` not in ``sizes``.
    """
    if initial_size not in sizes:
        raise GpucommError(f"initial size {initial_size!r} is not valid: expected one of {sizes}")
    mesh = make_fabric(link, topology="mesh", mesh_size=mesh_size)
    switch = make_fabric(link)
    gpus = list(range(2, mesh_size + 1))
    name = get_link(link).name.split(" (")[0]

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("bandwidth per GPU, one direction", "one all_reduce (model)"))
    bw = [
        ("NVSwitch: any pair (nominal)", [switch.link.bw_bytes_per_s / 1e9] * len(gpus), COLORS[0], "dot"),
        ("NVSwitch: per GPU in the collective (effective)",
         [per_gpu_bw_bytes_per_s(switch, n) / 1e9 for n in gpus], COLORS[0], "solid"),
        ("mesh: one pair (nominal)", [pair_bw_bytes_per_s(mesh) / 1e9] * len(gpus), COLORS[1], "dot"),
        ("mesh: per GPU in the collective (effective)", [per_gpu_bw_bytes_per_s(mesh, n) / 1e9 for n in gpus],
         COLORS[1], "solid"),
    ]
    for label, y, color, dash in bw:
        fig.add_trace(go.Scatter(x=gpus, y=sig(y), name=label, mode="lines+markers", line=dict(color=color, dash=dash),
                                 hovertemplate="%{x} GPUs: %{y:.3g} GB/s<extra>" + label + "</extra>"), row=1, col=1)

    def times(size: int) -> list[list[float]]:
        out = []
        for fabric in (switch, mesh):
            out.append(sig([collective_cost("all_reduce", size, num_ranks=n, fabric=fabric).time_s * 1e6
                             for n in gpus]))
        return out

    def algos(size: int) -> list[list[str]]:
        return [[collective_cost("all_reduce", size, num_ranks=n, fabric=fabric).algorithm for n in gpus]
                for fabric in (switch, mesh)]

    first = len(fig.data)
    for label, y, a, color in zip(("NVSwitch", f"mesh of {mesh_size}"), times(initial_size), algos(initial_size),
                                  COLORS[:2]):
        fig.add_trace(go.Scatter(x=gpus, y=y, customdata=a, name=f"{label}: all_reduce time", mode="lines+markers",
                                 line=dict(color=color, width=3),
                                 hovertemplate="%{x} GPUs: %{y:.3g} us (%{customdata})<extra>" + label + "</extra>"),
                      row=1, col=2)
    time_traces = [first, first + 1]

    def title(size: int) -> str:
        return f"{name}: point-to-point mesh of {mesh_size} vs NVSwitch; all_reduce of {format_size(size)}"

    buttons = [dict(method="update", label=format_size(s),
                    args=[{"y": times(s), "customdata": algos(s)}, {"title.text": title(s)}, time_traces])
               for s in sizes]
    fig.update_xaxes(title_text="GPUs taking part", dtick=1)
    fig.update_yaxes(title_text="GB/s (1e9 B/s), per direction", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="time (us)", rangemode="tozero", row=1, col=2)
    height, top, bottom = 600, 150, 160
    y = y_from_top(48, height=height, top=top, bottom=bottom)
    fig.update_layout(
        title=corner_title(title(initial_size)), template="plotly_white", height=height, margin=dict(t=top, b=bottom),
        legend=dict(orientation="h", y=-0.2),
        updatemenus=[dict(type="buttons", direction="right", active=sizes.index(initial_size), buttons=buttons,
                          x=0.14, xanchor="left", y=y, yanchor="top", pad=dict(r=4, t=0))],
        annotations=[*fig.layout.annotations,
                     dict(text="message size:", x=0.13, xref="paper", xanchor="right", y=y, yref="paper",
                          yanchor="top", yshift=-6, showarrow=False)])
    return fig


_TOPO_COLORS = ["#ffffff", "#2ca02c", "#98df8a", "#bcbd22", "#ff9896", "#ff7f0e", "#d62728"]


def topo_matrix_figure(matrix: TopoMatrix, *, title: str = "nvidia-smi topo -m") -> go.Figure:
    """Heatmap of a parsed ``nvidia-smi topo -m`` matrix: colour = path class, text = printed code.

    Hover shows the legend meaning and whether NCCL uses P2P at that distance by default.
    A dropdown switches between all devices and GPUs only.

    Parameters
    ----------
    matrix : TopoMatrix
        From :func:`gpucomm.measure.topology.parse_topo_matrix`.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    def grid(devices: tuple[str, ...]) -> tuple[list, list, list]:
        z, text, hover = [], [], []
        for a in devices:
            zr, tr, hr = [], [], []
            for b in devices:
                cell = matrix.cell(a, b)
                code, links = describe_cell(cell)
                zr.append(code.rank)
                tr.append(cell.strip())
                p2p = "P2P (direct)" if code.nccl_p2p_by_default else "via host memory (SHM)"
                what = f"{links} NVLink(s)" if links else code.hops
                hr.append(f"{a} - {b}: {cell.strip()}<br>{what}<br>NCCL: {code.nccl_path}, default {p2p}")
            z.append(zr)
            text.append(tr)
            hover.append(hr)
        return z, text, hover

    n_colors = len(_TOPO_COLORS)
    scale = []
    for i, c in enumerate(_TOPO_COLORS):  # discrete bands, one per rank 0..6
        scale += [[i / n_colors, c], [(i + 1) / n_colors, c]]
    views = [("all devices", matrix.devices)]
    if matrix.gpus and len(matrix.gpus) < len(matrix.devices):
        views.append(("GPUs only", matrix.gpus))
    z, text, hover = grid(views[0][1])
    fig = go.Figure(go.Heatmap(
        z=z, x=list(views[0][1]), y=list(views[0][1]), text=text, customdata=hover, texttemplate="%{text}",
        hovertemplate="%{customdata}<extra></extra>", colorscale=scale, zmin=-0.5, zmax=n_colors - 0.5,
        showscale=False, xgap=1, ygap=1))
    menus = []
    if len(views) > 1:
        buttons = []
        for label, devices in views:
            z, text, hover = grid(devices)
            buttons.append(dict(label=label, method="restyle",
                                args=[{"z": [z], "x": [list(devices)], "y": [list(devices)], "text": [text],
                                       "customdata": [hover]}]))
        menus = [dict(menu("dropdown", buttons), y=-0.04, yanchor="top", direction="up")]
    fig.update_layout(title=top_title(title), template="plotly_white", height=600, margin=dict(t=110, b=70),
                      xaxis=dict(side="top", tickangle=-45), yaxis=dict(autorange="reversed"), updatemenus=menus)
    return fig
