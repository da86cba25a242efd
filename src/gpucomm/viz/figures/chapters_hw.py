"""Figures of the hardware chapters: why communication limits scaling, PCIe, NVLink.

Every figure is a plain ``plotly.graph_objects.Figure`` whose interactivity (buttons,
dropdowns, sliders) lives in ``layout.updatemenus`` / ``layout.sliders`` over precomputed
data, so it works in the static HTML book without a kernel. Numbers come from the model
layer (:mod:`gpucomm.model.scaling`, :mod:`gpucomm.model.tp`, :mod:`gpucomm.model.cost`, :mod:`gpucomm.measure.topology`).
"""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.hardware import get_gpu, get_link, get_pcie_gen
from gpucomm.viz.calculators.collective import Path, cost_explorer_figure
from gpucomm.model.scaling import GENERATIONS, Generation, tp_flops_per_wire_byte
from gpucomm.measure.topology import TopoMatrix, describe_cell
from gpucomm.model.tp import get_model, tp_step

_COMPUTE, _NVLINK, _PCIE = "#1f77b4", "#2ca02c", "#d62728"
_TOP_MARGIN_PX = 100  # title on the first row, buttons on the second, then the plot


def _title(text: str) -> dict:
    """Title pinned to the top of the figure, so the button row below it never covers it."""
    return dict(text=text, x=0.0, xanchor="left", xref="paper", y=0.99, yref="container", yanchor="top",
                font=dict(size=16))


def _menu(kind: str, buttons: list[dict]) -> dict:
    """A button row (or dropdown) just above the plot area, under the title."""
    return dict(type=kind, direction="right" if kind == "buttons" else "down", buttons=buttons, active=0,
                x=0.0, xanchor="left", y=1.02, yanchor="bottom", showactive=True, pad=dict(t=0, b=0))


# --- why communication: compute vs links over the generations -------------------------------------

def compute_vs_links_figure(generations: tuple[Generation, ...] = GENERATIONS, *, model: str = "llama-3-70b",
                            tp_sizes: tuple[int, ...] = (2, 8)) -> go.Figure:
    """Compute (dense 16-bit FLOP/s) vs NVLink and PCIe bandwidth per GPU, by year, log y, three views.

    Buttons switch the normalisation (static HTML, precomputed):

    * **absolute**: TFLOP/s and GB/s per direction on one log axis;
    * **growth since the first generation**: each series divided by its first value;
    * **FLOP per byte of link** (machine balance): compute / link bandwidth, with the
      communication intensity of ``model`` under Megatron TP at each of ``tp_sizes`` as
      horizontal lines: above a line, the link cannot keep up even with perfect overlap.

    Parameters
    ----------
    generations : tuple of Generation
        Points to plot (default: P100 to B200).
    model : str
        Model preset for the TP intensity lines.
    tp_sizes : tuple of int
        TP degrees (>= 2) for the intensity lines.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    GpucommError
        Fewer than two generations; unknown model; a TP degree below 2.
    """
    if len(generations) < 2:
        raise GpucommError(f"{len(generations)} generations: expected at least 2 to show growth")
    years = [g.year for g in generations]
    labels = [g.label for g in generations]
    compute = [g.compute_flops_per_s / 1e12 for g in generations]
    nvlink = [g.nvlink_bw_bytes_per_s / 1e9 for g in generations]
    pcie = [g.pcie_bw_bytes_per_s / 1e9 for g in generations]
    nv_names = [get_link(g.nvlink_key).name.split(" (")[0] for g in generations]
    pcie_names = [get_pcie_gen(g.pcie_gen).name + " x16" for g in generations]
    growth = [[v / series[0] for v in series] for series in (compute, nvlink, pcie)]
    bal_nv = [g.flops_per_nvlink_byte for g in generations]
    bal_pcie = [g.flops_per_pcie_byte for g in generations]
    cfg = get_model(model)
    intensities = [(t, tp_flops_per_wire_byte(model, tp_size=t)) for t in tp_sizes]

    fig = go.Figure()
    # traces 0-2: absolute (and growth) series
    fig.add_trace(go.Scatter(x=years, y=compute, name="compute: dense 16-bit (TFLOP/s)", mode="lines+markers+text",
                             text=labels, textposition=["bottom right"] + ["top left"] * (len(labels) - 1),
                             line=dict(color=_COMPUTE, width=3),
                             customdata=[g.compute_note for g in generations],
                             hovertemplate="%{text}: %{y:.4g}<br>%{customdata}<extra>compute</extra>"))
    fig.add_trace(go.Scatter(x=years, y=nvlink, name="NVLink per GPU, per direction (GB/s)", mode="lines+markers",
                             line=dict(color=_NVLINK, width=3), customdata=nv_names,
                             hovertemplate="%{customdata}: %{y:.4g}<extra>NVLink</extra>"))
    fig.add_trace(go.Scatter(x=years, y=pcie, name="PCIe x16 host link, per direction (GB/s)", mode="lines+markers",
                             line=dict(color=_PCIE, width=3), customdata=pcie_names,
                             hovertemplate="%{customdata}: %{y:.4g}<extra>PCIe</extra>"))
    # traces 3-4: machine balance
    fig.add_trace(go.Scatter(x=years, y=bal_nv, name="FLOP per byte over NVLink", mode="lines+markers",
                             visible=False, line=dict(color=_NVLINK, width=3, dash="dot"), text=labels,
                             hovertemplate="%{text}: %{y:.4g} FLOP/byte<extra>NVLink</extra>"))
    fig.add_trace(go.Scatter(x=years, y=bal_pcie, name="FLOP per byte over PCIe x16", mode="lines+markers",
                             visible=False, line=dict(color=_PCIE, width=3, dash="dot"), text=labels,
                             hovertemplate="%{text}: %{y:.4g} FLOP/byte<extra>PCIe</extra>"))
    # traces 5+: TP intensity lines
    for t, intensity in intensities:
        fig.add_trace(go.Scatter(x=[years[0], years[-1]], y=[intensity, intensity], mode="lines+text", visible=False,
                                 text=["", f"TP={t}"], textposition="top left",
                                 name=f"{cfg.name}, TP={t}: FLOPs per byte sent", line=dict(color="gray", dash="dash"),
                                 hovertemplate=f"TP={t}: %{{y:.4g}} FLOP per byte sent<extra>{cfg.name}</extra>"))
    n_lines = len(intensities)
    y_abs = [compute, nvlink, pcie, bal_nv, bal_pcie] + [[v, v] for _, v in intensities]
    y_growth = growth + [bal_nv, bal_pcie] + [[v, v] for _, v in intensities]
    views = [
        ("absolute", y_abs, [True] * 3 + [False] * (2 + n_lines),
         "TFLOP/s (compute), GB/s per direction (links)", "Compute vs link bandwidth per GPU"),
        (f"growth since {labels[0]}", y_growth, [True] * 3 + [False] * (2 + n_lines),
         f"growth since {labels[0]} (x)", "Growth: compute outruns the links"),
        ("FLOP per byte of link", y_abs, [False] * 3 + [True] * (2 + n_lines),
         "FLOP per byte (peak FLOP/s / link bytes/s)", "FLOPs done while one byte crosses the link"),
    ]
    buttons = [dict(label=label, method="update",
                    args=[{"y": ys, "visible": vis}, {"yaxis.title.text": ytitle, "title.text": title}])
               for label, ys, vis, ytitle, title in views]
    fig.update_layout(
        title=_title(views[0][4]), template="plotly_white", height=600, margin=dict(t=_TOP_MARGIN_PX, b=150),
        xaxis=dict(title="year of the GPU generation", dtick=2, range=[years[0] - 1, years[-1] + 1]),
        yaxis=dict(type="log", title=views[0][3]),
        legend=dict(orientation="h", y=-0.2),
        updatemenus=[_menu("buttons", buttons)],
    )
    return fig


def tp_speedup_figure(model: str = "llama-3-70b", *, gpu: str = "h100_sxm5",
                      paths: tuple[Path, ...] = (Path("nvlink4"), Path("pcie5"), Path("pcie5", p2p=False)),
                      tp_sizes: tuple[int, ...] = (1, 2, 4, 8),
                      scenarios: tuple[tuple[str, dict], ...] = (
                          ("prefill, 4096-token prompt", dict(phase="prefill", prompt_len=4096)),
                          ("decode, batch 1", dict(phase="decode", batch=1, prompt_len=4096)),
                          ("decode, batch 64", dict(phase="decode", batch=64, prompt_len=4096)),
                      )) -> go.Figure:
    """Speed-up of a TP forward pass vs TP degree, one line per link, buttons over workloads.

    The speed-up is :func:`gpucomm.model.tp.tp_step` at TP=1 over TP=t (roofline compute, alpha-beta
    all_reduce, no overlap): Amdahl's law with a serial part, the all_reduce, that does not shrink.

    Parameters
    ----------
    model : str
        Model preset.
    gpu : str
        GPU catalog key (needs FLOP/s and memory bandwidth).
    paths : tuple of Path
        Links between the TP GPUs.
    tp_sizes : tuple of int
        TP degrees on the x axis (must divide the model's heads).
    scenarios : tuple of (label, keyword arguments of tp_step)
        One button each.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    GpucommError
        From :func:`gpucomm.model.tp.tp_step` (unknown GPU or model, TP degree not dividing the heads).
    """
    if not scenarios:
        raise GpucommError("no scenario: expected at least one (label, tp_step keywords) pair")

    def curves(kwargs: dict) -> tuple[list[list[float]], list[list[float]]]:
        speed, share = [], []
        for p in paths:
            steps = [tp_step(model, gpu=gpu, tp_size=t, link=p.link, p2p=p.p2p, **kwargs) for t in tp_sizes]
            speed.append([steps[0].step_s / s.step_s for s in steps])
            share.append([100 * s.comm_share for s in steps])
        return speed, share

    cfg = get_model(model)
    gpu_name = get_gpu(gpu).name
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(tp_sizes), y=list(tp_sizes), name="ideal (no communication)", mode="lines",
                             line=dict(color="gray", dash="dash"), hoverinfo="skip"))
    speed0, share0 = curves(scenarios[0][1])
    colors = [_NVLINK, _COMPUTE, _PCIE, "#9467bd", "#8c564b"]
    for i, p in enumerate(paths):
        fig.add_trace(go.Scatter(x=list(tp_sizes), y=speed0[i], customdata=share0[i], name=p.label,
                                 mode="lines+markers", line=dict(color=colors[i % len(colors)], width=3),
                                 hovertemplate="TP=%{x}: %{y:.2f}x, all_reduce %{customdata:.0f}% of the pass"
                                               "<extra>%{fullData.name}</extra>"))
    buttons = []
    for label, kwargs in scenarios:
        speed, share = curves(kwargs)
        buttons.append(dict(label=label, method="restyle",
                            args=[{"y": speed, "customdata": share}, list(range(1, len(paths) + 1))]))
    fig.update_layout(
        title=_title(f"{cfg.key} on {gpu_name}: TP speed-up (model)"), template="plotly_white", height=560,
        margin=dict(t=_TOP_MARGIN_PX, b=130), xaxis=dict(title="TP degree (GPUs)", tickvals=list(tp_sizes)),
        yaxis=dict(title="speed-up over one GPU (x)", rangemode="tozero"), legend=dict(orientation="h", y=-0.2),
        updatemenus=[_menu("buttons", buttons)],
    )
    return fig


# --- PCIe ---------------------------------------------------------------------------------------------

PCIE_PATHS = tuple(Path(f"pcie{g}", p2p=p2p) for g in (3, 4, 5, 6) for p2p in (True, False))
"""PCIe 3.0-6.0 x16, each with P2P and staged through host memory."""


def pcie_allreduce_figure(gpu_counts: tuple[int, ...] = (2, 4, 8), initial_gpus: int = 4,
                          paths: tuple[Path, ...] = PCIE_PATHS) -> go.Figure:
    """all_reduce time and busbw vs message size over PCIe 3.0-6.0, with and without P2P, slider over GPUs.

    A thin wrapper of :func:`gpucomm.viz.calculators.collective.cost_explorer_figure` (same model, same
    slider), with the PCIe paths and GPU counts of a PCIe server.

    Raises
    ------
    GpucommError
        If ``initial_gpus`` is not one of ``gpu_counts``.
    """
    fig = cost_explorer_figure("all_reduce", paths=paths, gpu_counts=gpu_counts, initial_gpus=initial_gpus)
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
        menus = [dict(_menu("dropdown", buttons), y=-0.04, yanchor="top", direction="up")]
    fig.update_layout(title=_title(title), template="plotly_white", height=600, margin=dict(t=110, b=70),
                      xaxis=dict(side="top", tickangle=-45), yaxis=dict(autorange="reversed"), updatemenus=menus)
    return fig


# --- NVLink -----------------------------------------------------------------------------------------

def nvlink_generations_figure(generations: tuple[Generation, ...] = GENERATIONS) -> go.Figure:
    """NVLink bandwidth by generation, with a dropdown: per link, per GPU per direction, per GPU both directions.

    The per-GPU views also show the GPU's PCIe x16 host link on the same basis, for scale.

    Parameters
    ----------
    generations : tuple of Generation
        One bar group per entry (default: NVLink 1.0 on P100 to NVLink 5.0 on B200).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    names = [f"{get_link(g.nvlink_key).name.split(' (')[0]}<br>{g.label}" for g in generations]
    links = [g.nvlink_links for g in generations]
    per_link = [g.nvlink_per_link_bw_bytes_per_s / 1e9 for g in generations]
    per_gpu = [g.nvlink_bw_bytes_per_s / 1e9 for g in generations]
    bidir = [get_link(g.nvlink_key).bidir_marketing_bytes_per_s / 1e9 for g in generations]
    pcie = [g.pcie_bw_bytes_per_s / 1e9 for g in generations]
    pcie_bidir = [get_pcie_gen(g.pcie_gen).x16_bidir_marketing_bytes_per_s / 1e9 for g in generations]
    pcie_names = [get_pcie_gen(g.pcie_gen).name + " x16" for g in generations]

    def labels(values: list[float]) -> list[str]:
        return [f"{v:,.4g}" for v in values]

    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=per_gpu, name="NVLink", marker_color=_NVLINK, text=labels(per_gpu),
                         textposition="outside", customdata=links,
                         hovertemplate="%{y:,.4g} GB/s (%{customdata} links)<extra>NVLink</extra>"))
    fig.add_trace(go.Bar(x=names, y=pcie, name="PCIe x16 host link", marker_color=_PCIE, text=labels(pcie),
                         textposition="outside", customdata=pcie_names,
                         hovertemplate="%{customdata}: %{y:,.4g} GB/s<extra>PCIe</extra>"))
    views = [
        ("per GPU, per direction", [per_gpu, pcie], [True, True], "GB/s per direction (all links of one GPU)",
         "NVLink per GPU, per direction (use this)"),
        ("per link, per direction", [per_link, pcie], [True, False], "GB/s per direction, one link",
         "One NVLink link, per direction"),
        ("per GPU, both directions", [bidir, pcie_bidir], [True, True], "GB/s, both directions added",
         "Per GPU, both directions added (NVIDIA's headline)"),
    ]
    buttons = [dict(label=label, method="update",
                    args=[{"y": ys, "text": [labels(y) for y in ys], "visible": vis},
                          {"yaxis.title.text": ytitle, "title.text": title}])
               for label, ys, vis, ytitle, title in views]
    fig.update_layout(
        title=_title(views[0][4]), template="plotly_white", height=540, barmode="group",
        margin=dict(t=_TOP_MARGIN_PX, b=80), yaxis=dict(title=views[0][3], rangemode="tozero"),
        legend=dict(orientation="h", y=-0.18), uniformtext=dict(minsize=9, mode="show"),
        updatemenus=[_menu("dropdown", buttons)],
    )
    return fig
