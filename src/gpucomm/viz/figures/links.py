"""Figures of link bandwidth: compute vs links over the GPU generations, NVLink by generation, per direction vs both.

* :func:`compute_vs_links_figure`: dense 16-bit FLOP/s vs NVLink and PCIe bandwidth per GPU by year, three
  normalisations (``book/why_communication.md``);
* :func:`nvlink_generations_figure`: NVLink per link, per GPU per direction, per GPU both directions
  (``book/nvlink.md``);
* :func:`link_direction_figure`: every catalog link per direction, both directions added, and its ring
  busbw in the model (``book/myths.md``).

Static HTML: buttons and dropdowns replay data read from the catalog (:mod:`gpucomm.model.hardware`,
:mod:`gpucomm.model.scaling`) or computed by the model (:mod:`gpucomm.model.cost`).
"""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.cost import effective_bw_bytes_per_s
from gpucomm.model.hardware import LINKS, get_link, get_pcie_gen
from gpucomm.model.scaling import GENERATIONS, Generation, tp_flops_per_wire_byte
from gpucomm.model.tp import get_model
from gpucomm.viz.figures._layout import COMPUTE_COLOR, NVLINK_COLOR, PCIE_COLOR, TOP_MARGIN_PX, menu, top_title

__all__ = ["compute_vs_links_figure", "nvlink_generations_figure", "link_direction_figure"]


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
                             # the two oldest below and right of their point: left of the second, at the axis' left
                             # end, the label ran out of a phone's narrow plot and was cut
                             text=labels, textposition=["bottom right", "bottom right"] + ["top left"] * (len(labels) - 2),
                             line=dict(color=COMPUTE_COLOR, width=3),
                             customdata=[g.compute_note for g in generations],
                             hovertemplate="%{text}: %{y:.4g}<br>%{customdata}<extra>compute</extra>"))
    fig.add_trace(go.Scatter(x=years, y=nvlink, name="NVLink per GPU, per direction (GB/s)", mode="lines+markers",
                             line=dict(color=NVLINK_COLOR, width=3), customdata=nv_names,
                             hovertemplate="%{customdata}: %{y:.4g}<extra>NVLink</extra>"))
    fig.add_trace(go.Scatter(x=years, y=pcie, name="PCIe x16 host link, per direction (GB/s)", mode="lines+markers",
                             line=dict(color=PCIE_COLOR, width=3), customdata=pcie_names,
                             hovertemplate="%{customdata}: %{y:.4g}<extra>PCIe</extra>"))
    # traces 3-4: machine balance
    fig.add_trace(go.Scatter(x=years, y=bal_nv, name="FLOP per byte over NVLink", mode="lines+markers",
                             visible=False, line=dict(color=NVLINK_COLOR, width=3, dash="dot"), text=labels,
                             hovertemplate="%{text}: %{y:.4g} FLOP/byte<extra>NVLink</extra>"))
    fig.add_trace(go.Scatter(x=years, y=bal_pcie, name="FLOP per byte over PCIe x16", mode="lines+markers",
                             visible=False, line=dict(color=PCIE_COLOR, width=3, dash="dot"), text=labels,
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
        title=top_title(views[0][4]), template="plotly_white", height=600, margin=dict(t=TOP_MARGIN_PX, b=150),
        xaxis=dict(title="year of the GPU generation", dtick=2, range=[years[0] - 1, years[-1] + 1]),
        yaxis=dict(type="log", title=views[0][3]),
        legend=dict(orientation="h", y=-0.2),
        updatemenus=[menu("buttons", buttons)],
    )
    return fig


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
    fig.add_trace(go.Bar(x=names, y=per_gpu, name="NVLink", marker_color=NVLINK_COLOR, text=labels(per_gpu),
                         textposition="outside", customdata=links,
                         hovertemplate="%{y:,.4g} GB/s (%{customdata} links)<extra>NVLink</extra>"))
    fig.add_trace(go.Bar(x=names, y=pcie, name="PCIe x16 host link", marker_color=PCIE_COLOR, text=labels(pcie),
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
        title=top_title(views[0][4]), template="plotly_white", height=540, barmode="group",
        margin=dict(t=TOP_MARGIN_PX, b=80), yaxis=dict(title=views[0][3], rangemode="tozero"),
        legend=dict(orientation="h", y=-0.18), uniformtext=dict(minsize=9, mode="show"),
        updatemenus=[menu("dropdown", buttons)],
    )
    return fig


def _two_lines(name: str) -> str:
    """'NVLink 4.0 (H100/H200 SXM5, 18 links)' -> 'NVLink 4.0<br>H100/H200': short tick labels without rotation."""
    head, _, rest = name.partition(" (")
    return f"{head}<br>{rest.split(',')[0].split(' ')[0].rstrip(')')}" if rest else head


def link_direction_figure(links: tuple[str, ...] | None = None) -> go.Figure:
    """Per-GPU link bandwidth three ways (buttons): per direction, both directions added, ring busbw.

    Parameters
    ----------
    links : tuple of str, optional
        Link keys (default: every link in the catalog).

    Returns
    -------
    plotly.graph_objects.Figure
        One bar per link. Buttons: nominal per direction (what one transfer can use), the vendor's
        both-directions figure, and the large-message ring all_reduce busbw the model expects
        (:func:`gpucomm.model.cost.effective_bw_bytes_per_s`), all in GB/s (1e9 B/s).
    """
    keys = tuple(links or LINKS)
    entries = [get_link(k) for k in keys]
    names = [_two_lines(e.name) for e in entries]
    # (button label, what the title says, values, y axis title): short labels, so that the three buttons fit one
    # row of the book's 690 px figure; the title says it in full.
    views = [
        ("per direction", "per direction (nominal)", [e.bw_bytes_per_s / 1e9 for e in entries], "GB/s, one direction"),
        ("both directions (datasheet)", "both directions added (datasheet)",
         [e.bidir_marketing_bytes_per_s / 1e9 for e in entries], "GB/s, both directions added"),
        ("all_reduce busbw (model)", "all_reduce busbw (model, large messages)",
         [effective_bw_bytes_per_s(k) / 1e9 for k in keys], "busbw, GB/s per direction"),
    ]
    colors = ["#2ca02c" if e.kind == "pcie" else "#1f77b4" for e in entries]
    fig = go.Figure(go.Bar(x=names, y=views[0][2], marker=dict(color=colors), text=[f"{v:.0f}" for v in views[0][2]],
                           textposition="outside", hovertemplate="%{x}: %{y:.4g} GB/s<extra></extra>"))
    buttons = [dict(label=label, method="update",
                    args=[{"y": [y], "text": [[f"{v:.0f}" for v in y]]},
                          {"yaxis.title.text": axis, "title.text": f"Per-GPU link bandwidth: {what}"}])
               for label, what, y, axis in views]
    top = max(views[1][2]) * 1.15
    # Eleven two-line names side by side run together at the book's width: turned, they do not.
    fig.update_layout(
        title=f"Per-GPU link bandwidth: {views[0][1]}", template="plotly_white", height=560,
        yaxis=dict(title=views[0][3], range=[0, top]), xaxis=dict(tickangle=-40, tickfont=dict(size=10)),
        margin=dict(t=140, b=130),
        updatemenus=[dict(type="buttons", direction="right", x=0.0, xanchor="left", y=1.12, yanchor="bottom",
                          buttons=buttons)])
    return fig
