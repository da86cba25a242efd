"""Figures of the TP-inference, training, scale-out, myths and hardware-choice chapters (model -> plotly).

Every figure works in static HTML: sliders, dropdowns and buttons are plotly's own
(``layout.sliders`` / ``layout.updatemenus``) over data precomputed here, never ipywidgets.
Each builder only calls the model (:mod:`gpucomm.model.tp`, :mod:`gpucomm.model.planning`,
:mod:`gpucomm.model.cost`, the hardware catalog); no formula lives here.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost, effective_bw_bytes_per_s
from gpucomm.model.hardware import LINKS, get_link, get_network
from gpucomm.model.planning import ServingConfig, serving_estimate, system_serving_config, training_comm_estimate
from gpucomm.viz.calculators.collective import size_grid
from gpucomm.model.tp import get_model
from gpucomm.model.units import format_size

__all__ = [
    "tp_decode_scaling_figure", "training_comm_figure", "scale_out_busbw_figure", "link_direction_figure",
    "system_comparison_figure", "Workload", "NetworkPath",
]

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def _color(i: int) -> str:
    return _COLORS[i % len(_COLORS)]


def _check_initial(name: str, initial, options) -> None:
    if initial not in options:
        raise GpucommError(f"initial {name} {initial!r} is not valid: expected one of {tuple(options)}")


def _size_ticks(sizes: list[int]) -> tuple[list[int], list[str]]:
    ticks = [s for s in sizes if s.bit_length() % 4 == 1 or s == sizes[0]]  # every 16x
    return ticks, [format_size(s) for s in ticks]


# --- TP inference --------------------------------------------------------------------------------------------

def tp_decode_scaling_figure(model: str, configs: tuple[ServingConfig, ...], *, tp_sizes: tuple[int, ...] = (1, 2, 4, 8),
                             batches: tuple[int, ...] = (1, 4, 16, 64, 256), initial_batch: int = 1,
                             prompt_len: int = 1024, dtype: str = "fp16") -> go.Figure:
    """Decode tokens/s per user and per GPU vs TP degree, one line per GPU + link, slider over the batch.

    Parameters
    ----------
    model : str
        Model preset.
    configs : tuple of ServingConfig
        GPU + link combinations; degrees above a configuration's ``max_tp`` are left empty.
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
    _check_initial("batch", initial_batch, batches)
    cfg = get_model(model)

    def data(batch: int) -> tuple[list, list]:
        ys, symbols = [], []
        for c in configs:
            user, gpu, sym = [], [], []
            for tp in tp_sizes:
                if tp > c.max_tp:  # beyond the box or NVLink domain: no point
                    user.append(None)
                    gpu.append(None)
                    sym.append("circle")
                    continue
                s = c.step(cfg.key, tp_size=tp, phase="decode", batch=batch, prompt_len=prompt_len, dtype=dtype)
                user.append(s.tokens_per_s_per_user)
                gpu.append(s.tokens_per_s_per_gpu)
                sym.append("circle" if s.fits_memory else "circle-open")
            ys += [user, gpu]
            symbols += [sym, sym]
        return ys, symbols

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("tokens/s per user (latency)", "tokens/s per GPU (throughput)"))
    ys, symbols = data(initial_batch)
    for i, c in enumerate(configs):
        for col in (1, 2):
            k = 2 * i + col - 1
            fig.add_trace(go.Scatter(
                x=list(tp_sizes), y=ys[k], name=c.label, legendgroup=c.label, showlegend=col == 1,
                mode="lines+markers", line=dict(color=_color(i)), marker=dict(size=9, symbol=symbols[k]),
                hovertemplate="TP=%{x}: %{y:.3g} tokens/s<extra>%{fullData.name}</extra>"), row=1, col=col)
    title = f"{cfg.name}, decode, batch {{}} x {prompt_len}-token context (model)"
    steps = [dict(method="update", label=str(b), args=[{"y": data(b)[0], "marker.symbol": data(b)[1]},
                                                        {"title.text": title.format(b)}])
             for b in batches]
    fig.update_xaxes(type="log", tickvals=list(tp_sizes), ticktext=[str(t) for t in tp_sizes], title_text="TP degree")
    fig.update_yaxes(title_text="tokens/s per user", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="tokens/s per GPU", type="log", row=1, col=2)
    fig.update_layout(title=title.format(initial_batch), template="plotly_white", height=600,
                      margin=dict(t=80, b=200), legend=dict(orientation="h", y=-0.25),
                      sliders=[dict(active=batches.index(initial_batch), steps=steps, y=-0.5, len=0.9, x=0.05,
                                    currentvalue=dict(prefix="batch (sequences): "), pad=dict(t=10))])
    return fig


# --- training -----------------------------------------------------------------------------------------------

_STRATEGY_NAMES = {"dp": "DP (gradient all_reduce)", "fsdp": "FSDP / ZeRO-3", "pp": "PP (stage sends)",
                   "tp": "TP (4 all_reduces per layer)"}


def training_comm_figure(model: str, configs: tuple[ServingConfig, ...], *, gpu_counts: tuple[int, ...] = (2, 4, 8),
                         initial_gpus: int = 8, tokens_per_gpu: int = 8192, seq_len: int = 8192,
                         strategies: tuple[str, ...] = ("dp", "fsdp", "pp", "tp")) -> go.Figure:
    """Communication time per training step by strategy and system, slider over GPUs, buttons for overlap.

    Parameters
    ----------
    model : str
        Model preset.
    configs : tuple of ServingConfig
        GPU + link of each system (x axis).
    gpu_counts : tuple of int
        GPUs in the group, offered by the slider (weak scaling: ``tokens_per_gpu`` each).
    initial_gpus : int
        The slider's starting position.
    tokens_per_gpu, seq_len : int
        As :func:`gpucomm.model.planning.training_comm_estimate`.
    strategies : tuple of str
        Strategies, one bar per system each.

    Returns
    -------
    plotly.graph_objects.Figure
        Grouped bars (log y, seconds); black diamonds: the step's compute time. Buttons switch between all
        communication and the part left exposed when DP/FSDP overlap the backward pass.

    Raises
    ------
    GpucommError
        If ``initial_gpus`` is not in ``gpu_counts`` or the model rejects an input.
    """
    _check_initial("GPU count", initial_gpus, gpu_counts)
    labels = [c.label.replace(", ", "<br>") for c in configs]  # two-line tick labels, no rotation

    def raw(n: int) -> tuple[list, list, list]:
        est = {(s, i): training_comm_estimate(model, s, gpu=c.gpu, link=c.link, p2p=c.p2p, num_gpus=n,
                                              tokens_per_gpu=tokens_per_gpu, seq_len=seq_len, overlap=True)
               for s in strategies for i, c in enumerate(configs)}
        idx = range(len(configs))
        vals = [[est[s, i].exposed_s if exposed else est[s, i].comm.time_s for i in idx]
                for exposed in (False, True) for s in strategies]
        mem = [[f"{est[s, i].mem_bytes_per_gpu / 1e9:.0f} GB/GPU of weights + grads + Adam" for i in idx]
               for _ in (False, True) for s in strategies]
        return vals, mem, [est[strategies[0], i].compute_s for i in idx]

    raws = {n: raw(n) for n in gpu_counts}
    # a log axis cannot show 0 s: fully hidden communication is drawn at the axis floor and labelled "hidden"
    floor = min(v for vals, _, _ in raws.values() for row in vals for v in row if v > 0) / 3

    def data(n: int) -> tuple[list, list, list]:
        vals, mem, compute = raws[n]
        ys = [[v if v > 0 else floor for v in row] for row in vals] + [compute]
        hover = [[m if v > 0 else f"fully hidden behind the backward pass; {m}" for v, m in zip(row, mrow)]
                 for row, mrow in zip(vals, mem)] + [["" for _ in compute]]
        text = [["" if v > 0 else "hidden" for v in row] for row in vals] + [["" for _ in compute]]
        return ys, hover, text

    ys, hover, text = data(initial_gpus)
    fig = go.Figure()
    for exposed in (False, True):
        for i, s in enumerate(strategies):
            k = i + (len(strategies) if exposed else 0)
            fig.add_trace(go.Bar(
                x=labels, y=ys[k], name=_STRATEGY_NAMES.get(s, s), legendgroup=s, visible=not exposed,
                marker=dict(color=_color(i)), hovertext=hover[k], text=text[k], textposition="outside", textangle=-90,
                textfont=dict(size=11, color=_color(i)),
                hovertemplate="%{y:.3g} s (%{hovertext})<extra>%{fullData.name}</extra>"))
    fig.add_trace(go.Scatter(x=labels, y=ys[-1], name="compute per step", mode="markers",
                             marker=dict(symbol="diamond", size=12, color="black"),
                             hovertemplate="compute %{y:.3g} s<extra></extra>"))
    n_bars = len(strategies)
    vis_all = [True] * n_bars + [False] * n_bars + [True]
    vis_exp = [False] * n_bars + [True] * n_bars + [True]
    top = max(v for n in gpu_counts for row in data(n)[0] for v in row)
    title = (f"{get_model(model).name}: communication per training step (model)<br>"
             f"<sup>{{}} GPUs, {tokens_per_gpu} tokens per GPU</sup>")
    steps = []
    for n in gpu_counts:
        y, h, t = data(n)
        steps.append(dict(method="update", label=str(n), args=[{"y": y, "hovertext": h, "text": t},
                                                               {"title.text": title.format(n)}]))
    fig.update_layout(
        barmode="group", template="plotly_white", height=640, title=dict(text=title.format(initial_gpus), y=0.97),
        yaxis=dict(type="log", title="seconds per step", range=[math.log10(floor), math.log10(top * 3)]),
        xaxis=dict(tickangle=0), margin=dict(t=140, b=200), legend=dict(orientation="h", y=-0.22),
        updatemenus=[dict(type="buttons", direction="right", x=0.0, xanchor="left", y=1.16, yanchor="top",
                          buttons=[dict(label="no overlap: all communication", method="restyle",
                                        args=[{"visible": vis_all}]),
                                   dict(label="DP/FSDP overlap the backward pass: exposed part", method="restyle",
                                        args=[{"visible": vis_exp}])])],
        sliders=[dict(active=gpu_counts.index(initial_gpus), steps=steps, y=-0.45, len=0.9, x=0.05,
                      currentvalue=dict(prefix="GPUs: "), pad=dict(t=10))])
    return fig


# --- scale-out ----------------------------------------------------------------------------------------------

class NetworkPath:
    """A scale-out configuration: NIC type and NICs per node (for :func:`scale_out_busbw_figure`)."""

    def __init__(self, network: str, nics_per_node: int | None = None, label: str | None = None):
        self.network = get_network(network).key
        self.nics_per_node = nics_per_node
        nics = "1 NIC per GPU" if nics_per_node is None else f"{nics_per_node} NICs per node"
        self.label = label or f"{get_network(network).name}, {nics}"


def scale_out_busbw_figure(paths: tuple[NetworkPath, ...], *, link: str = "nvlink4", gpus_per_node: int = 8,
                           node_counts: tuple[int, ...] = (1, 2, 4, 16), initial_nodes: int = 2,
                           measured: list[tuple[str, list[int], list[float]]] = ()) -> go.Figure:
    """all_reduce busbw vs message size across nodes, one line per network, slider over the node count.

    Parameters
    ----------
    paths : tuple of NetworkPath
        Networks to compare.
    link : str
        Intra-node link.
    gpus_per_node : int
        GPUs per node.
    node_counts : tuple of int
        Node counts offered by the slider (1 = a single node, no network: every line is the same).
    initial_nodes : int
        The slider's starting position.
    measured : list of (label, msg_bytes list, busbw_bytes_per_s list)
        Published sweeps to mark, one trace each (shown at every slider position; say in the label which node
        count they belong to).

    Returns
    -------
    plotly.graph_objects.Figure
        busbw in GB/s (1e9 B/s, per direction) vs message size; algorithm: NCCL-like auto choice
        (hierarchical across nodes).

    Raises
    ------
    GpucommError
        If ``initial_nodes`` is not in ``node_counts``.
    """
    _check_initial("node count", initial_nodes, node_counts)
    sizes = size_grid(1024, 16 * 2**30)

    def data(nodes: int) -> list[list[float]]:
        out = []
        for p in paths:
            kw = dict(num_nodes=nodes, network=p.network, nics_per_node=p.nics_per_node) if nodes > 1 else {}
            out.append([collective_cost("all_reduce", s, num_ranks=nodes * gpus_per_node, link=link, **kw)
                        .busbw_bytes_per_s / 1e9 for s in sizes])
        return out

    fig = go.Figure()
    for i, (p, y) in enumerate(zip(paths, data(initial_nodes))):
        fig.add_trace(go.Scatter(x=sizes, y=y, name=p.label, mode="lines",
                                 line=dict(color=_color(i), width=2.5, dash=("solid", "dash", "dot", "dashdot")[i % 4]),
                                 hovertemplate="%{y:.3g} GB/s<extra>%{fullData.name}</extra>"))
    for label, msg_sizes, busbw in measured:
        fig.add_trace(go.Scatter(x=list(msg_sizes), y=[b / 1e9 for b in busbw], name=label, mode="markers",
                                 marker=dict(symbol="x", size=9, color="black"),
                                 hovertemplate="%{y:.4g} GB/s measured<extra>%{fullData.name}</extra>"))

    def title(n: int) -> str:
        where = f"{n} nodes x {gpus_per_node} GPUs" if n > 1 else f"1 node of {gpus_per_node} GPUs (no network)"
        return f"all_reduce busbw, {where} (model)<br><sup>{get_link(link).name} inside each node</sup>"

    steps = [dict(method="update", label=str(n), args=[{"y": data(n)}, {"title.text": title(n)}, list(range(len(paths)))])
             for n in node_counts]
    ticks, text = _size_ticks(sizes)
    fig.update_layout(
        title=title(initial_nodes), template="plotly_white", height=640, margin=dict(t=80, b=240),
        xaxis=dict(type="log", tickvals=ticks, ticktext=text, title="message size (per-rank buffer)"),
        yaxis=dict(title="busbw (GB/s, per direction)", rangemode="tozero"),
        legend=dict(orientation="h", y=-0.2),
        sliders=[dict(active=node_counts.index(initial_nodes), steps=steps, y=-0.62, len=0.9, x=0.05,
                      currentvalue=dict(prefix="nodes: "), pad=dict(t=10))])
    return fig


# --- myths: per direction vs both directions --------------------------------------------------------------

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
    views = [
        ("per direction (nominal)", [e.bw_bytes_per_s / 1e9 for e in entries], "GB/s, one direction"),
        ("both directions added (datasheet)", [e.bidir_marketing_bytes_per_s / 1e9 for e in entries],
         "GB/s, both directions added"),
        ("all_reduce busbw (model, large messages)", [effective_bw_bytes_per_s(k) / 1e9 for k in keys],
         "busbw, GB/s per direction"),
    ]
    colors = ["#2ca02c" if e.kind == "pcie" else "#1f77b4" for e in entries]
    fig = go.Figure(go.Bar(x=names, y=views[0][1], marker=dict(color=colors), text=[f"{v:.0f}" for v in views[0][1]],
                           textposition="outside", hovertemplate="%{x}: %{y:.4g} GB/s<extra></extra>"))
    buttons = [dict(label=label, method="update",
                    args=[{"y": [y], "text": [[f"{v:.0f}" for v in y]]},
                          {"yaxis.title.text": axis, "title.text": f"Per-GPU link bandwidth: {label}"}])
               for label, y, axis in views]
    top = max(views[1][1]) * 1.15
    fig.update_layout(
        title=f"Per-GPU link bandwidth: {views[0][0]}", template="plotly_white", height=520,
        yaxis=dict(title=views[0][2], range=[0, top]), xaxis=dict(tickangle=0, tickfont=dict(size=10)),
        margin=dict(t=140, b=90),
        updatemenus=[dict(type="buttons", direction="right", x=0.0, xanchor="left", y=1.12, yanchor="bottom",
                          buttons=buttons)])
    return fig


# --- choosing hardware -----------------------------------------------------------------------------------

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
        TP degree; None uses each system's largest (:attr:`ServingConfig.max_tp`).
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
        Unknown system or a fabric :func:`gpucomm.model.planning.system_serving_config` cannot describe.
    """
    configs = [system_serving_config(s) for s in systems]
    # short two-line tick labels: "DGX A100 / HGX A100" -> "DGX<br>A100", "8 x RTX 4090 on PCIe..." -> "8 x<br>RTX 4090"
    short = [c.label.split(" / ")[0].split(" (")[0].split(" on ")[0] for c in configs]
    names = [n.replace(" ", "<br>", 1) if not n.startswith("8 x") else n.replace("8 x ", "8 x<br>", 1) for n in short]

    def data(w: Workload) -> tuple[list, list, list]:
        est = [serving_estimate(w.model, c, tp_size=w.tp_size or c.max_tp, batch=w.batch, prompt_len=w.prompt_len,
                                dtype=w.dtype) for c in configs]
        colors = [_color(0) if e.fits_memory else "#bbbbbb" for e in est]
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
    fig.update_layout(title="Decode speed by system (model); workload:", template="plotly_white", height=600,
                      margin=dict(t=150, b=90), uniformtext=dict(minsize=9, mode="hide"),
                      updatemenus=[dict(type="dropdown", x=1.0, xanchor="right", y=1.14, yanchor="bottom", active=0,
                                        buttons=buttons)])
    return fig
