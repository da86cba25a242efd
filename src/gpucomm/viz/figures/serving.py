"""Figures of serving a model on a TP group: decode speed vs TP degree, NVIDIA's TP=2 table, systems compared.

* :func:`tp_decode_scaling_figure`: decode tokens/s per user and per GPU vs the TP degree, a slider over the
  batch (``book/tp_inference.md``);
* :func:`tp2_throughput_figure`: throughput per GPU vs batch at TP=2, point-to-point vs NVSwitch, next to
  NVIDIA's published table (``book/nvswitch.md``);
* :func:`system_comparison_figure`: decode speed of catalog systems for a workload chosen in a dropdown
  (``book/choosing_hardware.md``).

Static HTML: sliders, dropdowns and buttons replay data computed in advance by
:mod:`gpucomm.model.planning` (:func:`~gpucomm.model.planning.serving_estimate`,
:func:`~gpucomm.model.planning.request_throughput`); no formula lives here.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gpucomm import GpucommError
from gpucomm.model.fabric import Fabric, make_fabric, system_fabric
from gpucomm.model.hardware import get_gpu
from gpucomm.model.measurements import NVIDIA_BLOG_TP2_THROUGHPUT
from gpucomm.model.planning import max_tp_size, request_throughput, serving_estimate
from gpucomm.model.tp import get_model, tp_step
from gpucomm.viz.figures._layout import COLORS, check_initial, color, corner_title, legend_then_slider, sig, y_from_top

__all__ = ["tp_decode_scaling_figure", "tp2_throughput_figure", "Workload", "system_comparison_figure"]


def tp_decode_scaling_figure(model: str, fabrics: tuple[Fabric, ...], *, tp_sizes: tuple[int, ...] = (1, 2, 4, 8),
                             batches: tuple[int, ...] = (1, 4, 16, 64, 256), initial_batch: int = 1,
                             prompt_len: int = 1024, dtype: str = "fp16",
                             algorithms: tuple[str, ...] | None = None) -> go.Figure:
    """Decode tokens/s per user and per GPU vs TP degree, one line per GPU + link, slider over the batch.

    Parameters
    ----------
    model : str
        Model preset.
    fabrics : tuple of Fabric
        GPU + link combinations, one line each (named by :attr:`~gpucomm.model.fabric.Fabric.label`); degrees
        above a fabric's :func:`~gpucomm.model.planning.max_tp_size` are left empty.
    tp_sizes : tuple of int
        TP degrees on the x axis.
    batches : tuple of int
        Batch sizes offered by the slider (precomputed).
    initial_batch : int
        The slider's starting position, one of ``batches``.
    prompt_len : int
        Context length of every sequence (KV cache read per step).
    dtype : str
        Weights, activations and KV cache dtype.
    algorithms : tuple of str, optional
        All_reduce algorithm of each fabric's line (default ``auto`` for all; ``one_shot``: an inference
        engine's custom all_reduce).

    Returns
    -------
    plotly.graph_objects.Figure
        Left: tokens/s per user (1 / decode step time). Right: tokens/s per GPU. Open markers: weights + KV
        cache do not fit in the GPUs' memory at that degree and batch.

    Raises
    ------
    GpucommError
        If ``initial_batch`` is not in ``batches``, or the model rejects a configuration.
    """
    check_initial("batch", initial_batch, batches)
    cfg = get_model(model)
    algorithms = tuple(algorithms or ("auto",) * len(fabrics))
    if len(algorithms) != len(fabrics):
        raise GpucommError(f"{len(algorithms)} algorithms for {len(fabrics)} fabrics: expected one per fabric")

    def data(batch: int) -> tuple[list, list]:
        ys, symbols = [], []
        for c, algorithm in zip(fabrics, algorithms):
            user, gpu, sym = [], [], []
            for tp in tp_sizes:
                if tp > max_tp_size(c):  # beyond the box or NVLink domain: no point
                    user.append(None)
                    gpu.append(None)
                    sym.append("circle")
                    continue
                s = tp_step(cfg.key, fabric=c, tp_size=tp, phase="decode", batch=batch, prompt_len=prompt_len,
                            dtype=dtype, algorithm=algorithm)
                user.append(s.tokens_per_s_per_user)
                gpu.append(s.tokens_per_s_per_gpu)
                sym.append("circle" if s.fits_memory else "circle-open")
            ys += [user, gpu]
            symbols += [sym, sym]
        return ys, symbols

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("tokens/s per user (latency)", "tokens/s per GPU (throughput)"))
    ys, symbols = data(initial_batch)
    for i, c in enumerate(fabrics):
        for col in (1, 2):
            k = 2 * i + col - 1
            fig.add_trace(go.Scatter(
                x=list(tp_sizes), y=ys[k], name=c.label, legendgroup=c.label, showlegend=col == 1,
                mode="lines+markers", line=dict(color=color(i)), marker=dict(size=9, symbol=symbols[k]),
                hovertemplate="TP=%{x}: %{y:.3g} tokens/s<extra>%{fullData.name}</extra>"), row=1, col=col)
    title = f"{cfg.name}, decode, batch {{}} x {prompt_len}-token context (model)"
    steps = [dict(method="update", label=str(b), args=[{"y": data(b)[0], "marker.symbol": data(b)[1]},
                                                        {"title.text": title.format(b)}])
             for b in batches]
    fig.update_xaxes(type="log", tickvals=list(tp_sizes), ticktext=[str(t) for t in tp_sizes], title_text="TP degree")
    fig.update_yaxes(title_text="tokens/s per user", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="tokens/s per GPU", type="log", dtick="D2", row=1, col=2)  # 1-2-5 labels: >= 3 on a short range
    below = legend_then_slider([t.name for t in fig.data if t.showlegend is not False], height=640, top=80)
    fig.update_layout(title=title.format(initial_batch), template="plotly_white", height=640,
                      margin=dict(t=80, b=below["margin_b"]), legend=below["legend"],
                      sliders=[dict(active=batches.index(initial_batch), steps=steps, y=below["slider_y"], yanchor="top",
                                    len=0.9, x=0.05, currentvalue=dict(prefix="batch (sequences): "), pad=dict(t=10))])
    return fig


def tp2_throughput_figure(model: str = "llama-3-70b", *, gpu: str = "h200_sxm", link: str = "nvlink4",
                          mesh_size: int = 8, isl: int = 8192, osl: int = 256,
                          measured: dict[int, tuple[float, float]] | None = None) -> go.Figure:
    """Throughput per GPU vs batch at TP=2, point-to-point vs NVSwitch: the model next to NVIDIA's table.

    Parameters
    ----------
    model, gpu, link : str
        Model preset, GPU and link (catalog keys).
    mesh_size : int
        GPUs on the point-to-point board.
    isl, osl : int
        Input and output lengths in tokens.
    measured : dict of int to (float, float), optional
        batch -> (point-to-point, NVSwitch) tokens/s per GPU to draw as bars (default:
        :data:`gpucomm.model.measurements.NVIDIA_BLOG_TP2_THROUGHPUT`).

    Returns
    -------
    plotly.graph_objects.Figure
        Bars: published values; lines: :func:`gpucomm.model.planning.request_throughput`. Buttons switch between tokens/s
        per GPU and the NVSwitch advantage (ratio).
    """
    table = measured or NVIDIA_BLOG_TP2_THROUGHPUT
    batches = sorted(table)
    fabrics = (make_fabric(link, gpu=gpu, topology="mesh", mesh_size=mesh_size, name="point-to-point"),
               make_fabric(link, gpu=gpu, name="NVSwitch"))
    model_tps = [[request_throughput(model, f, tp_size=2, batch=b, isl=isl, osl=osl).tokens_per_s_per_gpu
                  for b in batches] for f in fabrics]
    labels = [str(b) for b in batches]
    fig = go.Figure()
    for i, c in enumerate(fabrics):
        fig.add_trace(go.Bar(x=labels, y=[table[b][i] for b in batches], name=f"{c.label}: NVIDIA (Table 3)",
                             marker_color=COLORS[i], opacity=0.55,
                             hovertemplate="batch %{x}: %{y} tok/s/GPU<extra>NVIDIA</extra>"))
    for i, c in enumerate(fabrics):
        fig.add_trace(go.Scatter(x=labels, y=sig(model_tps[i], 3), name=f"{c.label}: model", mode="lines+markers",
                                 line=dict(color=COLORS[i], width=3),
                                 hovertemplate="batch %{x}: %{y:.3g} tok/s/GPU<extra>model</extra>"))
    ratio_meas = [table[b][1] / table[b][0] for b in batches]
    ratio_model = [s / p for p, s in zip(*model_tps)]
    fig.add_trace(go.Bar(x=labels, y=sig(ratio_meas, 3), name="NVSwitch advantage: NVIDIA", marker_color=COLORS[2],
                         opacity=0.55, visible=False, hovertemplate="batch %{x}: %{y:.2f}x<extra>NVIDIA</extra>"))
    fig.add_trace(go.Scatter(x=labels, y=sig(ratio_model, 3), name="NVSwitch advantage: model", mode="lines+markers",
                             line=dict(color=COLORS[2], width=3), visible=False,
                             hovertemplate="batch %{x}: %{y:.2f}x<extra>model</extra>"))
    title = f"TP=2 on {get_gpu(gpu).name}, ISL/OSL {isl}/{osl}: "
    buttons = [
        dict(method="update", label="tokens/s per GPU",
             args=[{"visible": [True] * 4 + [False] * 2},
                   {"yaxis.title.text": "output tokens/s per GPU", "title.text": title + "throughput per GPU"}]),
        dict(method="update", label="NVSwitch / point-to-point",
             args=[{"visible": [False] * 4 + [True] * 2},
                   {"yaxis.title.text": "NVSwitch advantage (x)", "title.text": title + "NVSwitch advantage"}]),
    ]  # title.text keeps the pinned position set below
    height, top, bottom = 540, 120, 150
    fig.update_layout(
        title=corner_title(title + "throughput per GPU"), template="plotly_white", height=height, barmode="group",
        xaxis_title="batch size (requests served together)", yaxis_title="output tokens/s per GPU",
        margin=dict(t=top, b=bottom), legend=dict(orientation="h", y=-0.25),
        updatemenus=[dict(type="buttons", direction="right", active=0, buttons=buttons, x=0, xanchor="left",
                          y=y_from_top(48, height=height, top=top, bottom=bottom), yanchor="top")])
    return fig


class Workload:
    """A serving workload for :func:`system_comparison_figure`.

    Parameters
    ----------
    label : str
        Name in the dropdown.
    model : str
        Model preset.
    batch : int
        Concurrent sequences per TP group.
    prompt_len : int
        Prompt (context) tokens per sequence.
    tp_size : int or None
        TP degree; None uses each system's largest (:func:`gpucomm.model.planning.max_tp_size`).
    dtype : str
        Weights, activations and KV cache dtype.
    """

    def __init__(self, label: str, model: str, *, batch: int = 1, prompt_len: int = 1024, tp_size: int | None = None,
                 dtype: str = "fp16"):
        self.label, self.model, self.batch, self.prompt_len = label, get_model(model).key, batch, prompt_len
        self.tp_size, self.dtype = tp_size, dtype


def system_comparison_figure(workloads: tuple[Workload, ...], systems: tuple[str, ...]) -> go.Figure:
    """Decode speed of catalog systems for a workload chosen in a dropdown.

    Parameters
    ----------
    workloads : tuple of Workload
        Options of the dropdown (precomputed).
    systems : tuple of str
        Keys in :data:`gpucomm.model.hardware.nvswitch.SYSTEMS` (NVSwitch or PCIe fabrics).

    Returns
    -------
    plotly.graph_objects.Figure
        Two bar panels (tokens/s per user, tokens/s per GPU); grey bars and the text "does not fit": weights
        and KV cache exceed the GPUs' memory (the speed is then what the roofline would give, not achievable).

    Raises
    ------
    GpucommError
        Unknown system or one :func:`gpucomm.model.fabric.system_fabric` cannot describe.
    """
    configs = [system_fabric(s) for s in systems]
    # short two-line tick labels: "DGX A100 / HGX A100" -> "DGX<br>A100", "8 x RTX 4090 on PCIe..." -> "8 x<br>RTX 4090"
    short = [c.label.split(" / ")[0].split(" (")[0].split(" on ")[0] for c in configs]
    names = [n.replace(" ", "<br>", 1) if not n.startswith("8 x") else n.replace("8 x ", "8 x<br>", 1) for n in short]

    def data(w: Workload) -> tuple[list, list, list]:
        est = [serving_estimate(w.model, c, tp_size=w.tp_size or max_tp_size(c), batch=w.batch, prompt_len=w.prompt_len,
                                dtype=w.dtype) for c in configs]
        colors = [color(0) if e.fits_memory else "#bbbbbb" for e in est]
        texts = [f"TP={e.tp_size}, comm {100 * e.decode_comm_share:.0f}%" if e.fits_memory else
                 f"TP={e.tp_size}, does not fit ({e.mem_bytes_per_gpu / 1e9:.0f} GB/GPU)" for e in est]
        return ([e.tokens_per_s_per_user for e in est], [e.tokens_per_s_per_gpu for e in est]), colors, texts

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("tokens/s per user", "tokens/s per GPU"))
    (user, gpu), colors, texts = data(workloads[0])
    for col, y in ((1, user), (2, gpu)):
        fig.add_trace(go.Bar(x=names, y=y, marker=dict(color=colors), text=texts, textposition="auto",
                             insidetextanchor="start", textangle=-90, cliponaxis=False, showlegend=False,
                             hovertemplate="%{x}: %{y:.3g} tokens/s (%{text})<extra></extra>"), row=1, col=col)
    buttons = []
    for w in workloads:
        (u, g), c, t = data(w)
        buttons.append(dict(label=w.label, method="update",
                            args=[{"y": [u, g], "marker.color": [c, c], "text": [t, t]}, {}]))
    fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(tickangle=0, tickfont=dict(size=10))
    fig.update_yaxes(title_text="tokens/s per user", row=1, col=1)
    fig.update_yaxes(title_text="tokens/s per GPU", row=1, col=2)
    # the menu sits on its own row under the title (left-aligned with it), so a long workload name never covers it
    fig.update_layout(title=dict(text="Decode speed by system (model), for the workload chosen below", y=0.97),
                      template="plotly_white", height=620, margin=dict(t=160, b=90),
                      uniformtext=dict(minsize=9, mode="hide"),
                      updatemenus=[dict(type="dropdown", x=0, xanchor="left", y=1.13, yanchor="bottom", active=0,
                                        buttons=buttons)])
    return fig
