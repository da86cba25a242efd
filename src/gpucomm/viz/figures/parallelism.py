"""Figures of tensor-parallel and training communication: TP speed-up, all_reduce time per pass, training strategies.

* :func:`tp_speedup_figure`: speed-up of a TP forward pass vs the TP degree, one line per link
  (``book/why_communication.md``);
* :func:`tp_comm_vs_tokens_figure`: all_reduce time of one TP forward pass vs tokens, a slider over the TP
  degree (``book/llama70b_tp4.md``);
* :func:`training_comm_figure`: communication per training step by strategy and system, a slider over the
  GPU count (``book/training.md``).

Static HTML: sliders and buttons replay data computed in advance by :mod:`gpucomm.model.tp` and
:mod:`gpucomm.model.planning`; no formula lives here.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import get_gpu
from gpucomm.model.planning import training_comm_estimate
from gpucomm.model.tp import get_model, tp_forward_comm, tp_step
from gpucomm.viz.figures._layout import (
    COMPUTE_COLOR,
    NVLINK_COLOR,
    PCIE_COLOR,
    TOP_MARGIN_PX,
    check_initial,
    color,
    legend_then_slider,
    menu,
    top_title,
)

__all__ = ["tp_speedup_figure", "tp_comm_vs_tokens_figure", "training_comm_figure"]


def tp_speedup_figure(model: str = "llama-3-70b", *, gpu: str = "h100_sxm5",
                      fabrics: tuple[Fabric, ...] = (make_fabric("nvlink4"), make_fabric("pcie5"),
                                                     make_fabric("pcie5", p2p=False)),
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
        GPU catalog key (needs FLOP/s and memory bandwidth), the GPU of every line.
    fabrics : tuple of Fabric
        How the TP GPUs are connected, one line each (named by :attr:`~gpucomm.model.fabric.Fabric.label`).
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
    with_gpu = [f.replace(gpu=gpu) for f in fabrics]

    def curves(kwargs: dict) -> tuple[list[list[float]], list[list[float]]]:
        speed, share = [], []
        for f in with_gpu:
            steps = [tp_step(model, fabric=f, tp_size=t, **kwargs) for t in tp_sizes]
            speed.append([steps[0].time_per_pass_s / s.time_per_pass_s for s in steps])
            share.append([100 * s.comm_share for s in steps])
        return speed, share

    cfg = get_model(model)
    gpu_name = get_gpu(gpu).name
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(tp_sizes), y=list(tp_sizes), name="ideal (no communication)", mode="lines",
                             line=dict(color="gray", dash="dash"), hoverinfo="skip"))
    speed0, share0 = curves(scenarios[0][1])
    colors = [NVLINK_COLOR, COMPUTE_COLOR, PCIE_COLOR, "#9467bd", "#8c564b"]
    for i, p in enumerate(fabrics):
        fig.add_trace(go.Scatter(x=list(tp_sizes), y=speed0[i], customdata=share0[i], name=p.label,
                                 mode="lines+markers", line=dict(color=colors[i % len(colors)], width=3),
                                 hovertemplate="TP=%{x}: %{y:.2f}x, all_reduce %{customdata:.0f}% of the pass"
                                               "<extra>%{fullData.name}</extra>"))
    buttons = []
    for label, kwargs in scenarios:
        speed, share = curves(kwargs)
        buttons.append(dict(label=label, method="restyle",
                            args=[{"y": speed, "customdata": share}, list(range(1, len(fabrics) + 1))]))
    fig.update_layout(
        title=top_title(f"{cfg.key} on {gpu_name}: TP speed-up (model)"), template="plotly_white", height=560,
        margin=dict(t=TOP_MARGIN_PX, b=130), xaxis=dict(title="TP degree (GPUs)", tickvals=list(tp_sizes)),
        yaxis=dict(title="speed-up over one GPU (x)", rangemode="tozero"), legend=dict(orientation="h", y=-0.2),
        updatemenus=[menu("buttons", buttons)],
    )
    return fig


def tp_comm_vs_tokens_figure(model: str, *, fabrics: tuple[Fabric, ...], tp_sizes: tuple[int, ...] = (2, 4, 8),
                             initial_tp: int = 4, token_counts: tuple[int, ...] | None = None,
                             measured: list[tuple[str, int, float]] = ()) -> go.Figure:
    """All_reduce time of one TP forward pass vs tokens, one line per fabric, slider over TP degree.

    Parameters
    ----------
    model : str
        Model preset key (``"llama-3-70b"``).
    fabrics : tuple of Fabric
        Links (and how they are wired) to compare, one line each.
    tp_sizes : tuple of int
        TP degrees offered by the slider (static HTML, precomputed).
    initial_tp : int
        The slider's starting position; must be in ``tp_sizes``.
    token_counts : tuple of int, optional
        x values (default 1..32768 tokens, powers of two).
    measured : list of (label, num_tokens, time_s)
        Published points to mark (shown at every slider position; they belong to ``initial_tp``).

    Returns
    -------
    plotly.graph_objects.Figure
        y: milliseconds of all_reduce per forward pass (2 per layer, no overlap).

    Raises
    ------
    GpucommError
        If ``initial_tp`` is not in ``tp_sizes``.
    """
    if initial_tp not in tp_sizes:
        raise GpucommError(f"initial TP degree {initial_tp!r} is not valid: expected one of {tp_sizes}")
    cfg = get_model(model)
    tokens = list(token_counts or [2**k for k in range(0, 16)])

    def ys(tp: int) -> list[list[float]]:
        return [[tp_forward_comm(cfg, tp_size=tp, num_tokens=t, fabric=f).comm_per_pass_s * 1e3 for t in tokens]
                for f in fabrics]

    fig = go.Figure()
    for fabric, y in zip(fabrics, ys(initial_tp)):
        fig.add_trace(go.Scatter(x=tokens, y=y, name=fabric.label, mode="lines+markers",
                                 hovertemplate="%{x} tokens: %{y:.3g} ms<extra>%{fullData.name}</extra>"))
    for label, num_tokens, time_s in measured:
        fig.add_trace(go.Scatter(x=[num_tokens], y=[time_s * 1e3], name=label, mode="markers",
                                 marker=dict(symbol="x", size=13, color="black"),
                                 hovertemplate="%{y:.4g} ms measured<extra>%{fullData.name}</extra>"))
    steps = [dict(method="update", label=str(tp),
                  args=[{"y": ys(tp)}, {"title.text": f"{cfg.name}, TP={tp}: all_reduce time per forward pass (model)"}],
                  )
             for tp in tp_sizes]
    for step in steps:  # restyle only the model traces; measured markers stay
        step["args"].append(list(range(len(fabrics))))
    below = legend_then_slider([t.name for t in fig.data], height=600, top=70)
    fig.update_layout(
        title=f"{cfg.name}, TP={initial_tp}: all_reduce time per forward pass (model)",
        xaxis=dict(type="log", title="tokens in the forward pass (prompt length x batch)"),
        yaxis=dict(type="log", title="all_reduce time per forward (ms)"),
        template="plotly_white", height=600, margin=dict(t=70, b=below["margin_b"]), legend=below["legend"],
        sliders=[dict(active=tp_sizes.index(initial_tp), steps=steps, currentvalue=dict(prefix="TP degree: "),
                      y=below["slider_y"], yanchor="top", pad=dict(t=10))],
    )
    return fig


_STRATEGY_NAMES = {"dp": "DP (gradient all_reduce)", "fsdp": "FSDP / ZeRO-3", "pp": "PP (stage sends)",
                   "tp": "TP (4 all_reduces per layer)"}


def training_comm_figure(model: str, fabrics: tuple[Fabric, ...], *, gpu_counts: tuple[int, ...] = (2, 4, 8),
                         initial_gpus: int = 8, tokens_per_gpu: int = 8192, seq_len: int = 8192,
                         strategies: tuple[str, ...] = ("dp", "fsdp", "pp", "tp")) -> go.Figure:
    """Communication time per training step by strategy and system, slider over GPUs, buttons for overlap.

    Parameters
    ----------
    model : str
        Model preset.
    fabrics : tuple of Fabric
        Each system (x axis, named by :attr:`~gpucomm.model.fabric.Fabric.label`): its GPU and how its GPUs
        are connected.
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
    check_initial("GPU count", initial_gpus, gpu_counts)
    labels = [f.label.replace(", ", "<br>") for f in fabrics]  # two-line tick labels, no rotation

    def raw(n: int) -> tuple[list, list, list]:
        est = {(s, i): training_comm_estimate(model, s, fabric=f, num_gpus=n, tokens_per_gpu=tokens_per_gpu,
                                              seq_len=seq_len, overlap=True)
               for s in strategies for i, f in enumerate(fabrics)}
        idx = range(len(fabrics))
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
                marker=dict(color=color(i)), hovertext=hover[k], text=text[k], textposition="outside", textangle=-90,
                textfont=dict(size=11, color=color(i)),
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
