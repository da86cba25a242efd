"""TP inference calculator: compute vs communication per layer, tokens/s, speed-up vs TP degree.

The model is :func:`gpucomm.model.tp.tp_step` (roofline compute + all_reduce communication of one
forward pass), :func:`gpucomm.model.tp.tp_speedup` and the request view of
:func:`gpucomm.model.planning.request_throughput` (a prefill, then ``output_len`` decode steps); this
module reads the calculator's inputs and draws the figures. Static HTML: :func:`tp_explorer_figure`
(a slider over the TP degree); live: :func:`gpucomm.viz.widgets.calculators.build_tp_widget` in a kernel, and
the book's live mode (:mod:`gpucomm.viz.calculators.live`, ``"tp"``), which runs :func:`tp_update` in the reader's
browser without plotly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpucomm import GpucommError
from gpucomm.model.measurements import NVIDIA_BLOG_TP2_THROUGHPUT
from gpucomm.model.planning import RequestThroughput, request_throughput
from gpucomm.model.tp import get_model, tp_speedup
from gpucomm.model.units import format_time
from gpucomm.viz.calculators.inputs import (
    FigureUpdate,
    apply_update,
    check_inputs,
    dtype_choices,
    get_interconnect,
    gpu_choices,
    interconnect_choices,
    model_choices,
    param,
    step_args,
)

if TYPE_CHECKING:  # plotly is imported where a figure is built: the book's live mode runs the updates without it
    import plotly.graph_objects as go

__all__ = ["TPInputs", "CONTROL_ROWS", "tp_request", "tp_degrees", "tp_figure", "tp_update", "tp_explorer_figure",
           "NVIDIA_BLOG_TABLE3", "TABLE3_BOARDS", "BATCHES", "EXPLORER_INTERCONNECTS", "LIVE_BAR", "table3_rows"]

NVIDIA_BLOG_TABLE3 = {
    "batch": tuple(NVIDIA_BLOG_TP2_THROUGHPUT),
    "nvlink4:mesh8": tuple(mesh for mesh, _ in NVIDIA_BLOG_TP2_THROUGHPUT.values()),
    "nvlink4:switch": tuple(switch for _, switch in NVIDIA_BLOG_TP2_THROUGHPUT.values()),
}
"""NVIDIA's Table 3 (:data:`gpucomm.model.measurements.NVIDIA_BLOG_TP2_THROUGHPUT`) by interconnect key: output
tokens/s per GPU vs batch, Llama 3.1 70B, H200, TP=2, ISL/OSL 8K/256, point-to-point board vs NVSwitch.
"Throughput modeled using internal measurements" (NVIDIA, not a run anyone can repeat; dtype and serving engine
not stated)."""

TABLE3_BOARDS = {"nvlink4:mesh8": "P2P mesh of 8", "nvlink4:switch": "NVSwitch"}
"""The two boards of NVIDIA's Table 3 (both NVLink 4.0, H200) by interconnect key, as their legend entries name them:
short, so that an entry fits one line of a phone's legend (the book's layout script wraps a longer name, which costs
the figure a full redraw as the page opens)."""

EXPLORER_INTERCONNECTS = ("nvlink4:switch", "nvlink4:mesh8", "pcie5:p2p", "pcie4:no-p2p")
"""Interconnects of the static explorer: the NVSwitch and P2P-mesh boards of NVIDIA's Table 3, then PCIe with and
without P2P."""

BATCHES = (1, 2, 4, 8, 16, 32, 64)
"""Batch sizes of the throughput panel (those of NVIDIA's Table 3, 1-32, and 64)."""


CONTROL_ROWS = (("model", "gpu", "interconnect"), ("tp_size", "batch", "dtype"), ("prompt_len", "output_len"))
"""Fields of :class:`TPInputs` per row of controls, in the live widget and in the book's live mode."""


@dataclass(frozen=True)
class TPInputs:
    """Inputs of the TP inference calculator. Lengths in tokens."""

    model: str = param("llama-3-70b", label="model", choices=model_choices,
                       help="Transformer preset (Hugging Face config.json shapes).")
    tp_size: int = param(2, label="TP degree", unit="GPUs", min=1, max=128,
                         help="GPUs sharing every layer; must divide the attention heads.")
    batch: int = param(8, label="batch", unit="sequences", min=1, max=4096,
                       help="Sequences processed together.")
    prompt_len: int = param(8192, label="prompt", unit="tokens", min=1, max=1_048_576,
                            help="Input (prompt) tokens per sequence: the prefill.")
    output_len: int = param(256, label="output", unit="tokens", min=1, max=1_048_576,
                            help="Generated tokens per sequence: the decode steps.")
    dtype: str = param("fp16", label="dtype", choices=dtype_choices,
                       help="Weights, activations and KV cache dtype.")
    gpu: str = param("h200_sxm", label="GPU", choices=gpu_choices,
                     help="Catalog GPU: dense FLOP/s and memory bandwidth set the compute roofline.")
    interconnect: str = param("nvlink4:switch", label="interconnect", choices=interconnect_choices,
                              help="Link between the TP GPUs and how it is wired (switch, P2P mesh, PCIe with or without P2P).")


def tp_request(model: str, *, gpu: str, tp_size: int, interconnect: str, batch: int = 1, prompt_len: int = 8192,
               output_len: int = 256, dtype: str = "fp16") -> RequestThroughput:
    """Prefill + decode of one batch on a TP group: :func:`gpucomm.model.planning.request_throughput` on a preset.

    Parameters
    ----------
    model, gpu, tp_size, batch, prompt_len, dtype
        As :func:`gpucomm.model.tp.tp_step`.
    interconnect : str
        Key of :func:`~gpucomm.viz.calculators.inputs.interconnect_choices` (``"nvlink4:mesh8"``...).
    output_len : int
        Tokens generated per sequence, >= 1.

    Returns
    -------
    gpucomm.model.planning.RequestThroughput
        ``prefill`` and ``decode`` (:class:`gpucomm.model.tp.TPStep`), ``request_s``, tokens/s per user
        and per GPU (the output-token throughput of NVIDIA's Table 3, :data:`NVIDIA_BLOG_TABLE3`).

    Raises
    ------
    GpucommError
        As :func:`gpucomm.model.planning.request_throughput`; a TP degree larger than the mesh.

    Examples
    --------
    >>> r = tp_request("llama-3-70b", gpu="h200_sxm", tp_size=2, interconnect="nvlink4:switch", batch=8)
    >>> r.decode.memory_bound, 90 < r.tokens_per_s_per_gpu < 110  # memory-bound decode: about 100 tokens/s per GPU
    (True, True)
    """
    ic = get_interconnect(interconnect)
    if ic.topology == "mesh" and tp_size > ic.mesh_size:
        raise GpucommError(f"TP degree {tp_size} does not fit a mesh of {ic.mesh_size} GPUs: expected at most {ic.mesh_size}")
    return request_throughput(model, ic.replace(gpu=gpu), tp_size=tp_size, batch=batch, isl=prompt_len, osl=output_len,
                              dtype=dtype)


MAX_TP_DEGREE = 8
"""The largest TP degree the calculator offers: one 8-GPU node."""


def _tp_degree_ticks() -> list[int]:
    """Every degree :func:`tp_degrees` can offer (powers of 2 up to :data:`MAX_TP_DEGREE`), the TP axis's ticks.

    >>> _tp_degree_ticks()
    [1, 2, 4, 8]
    """
    return [1 << i for i in range(MAX_TP_DEGREE.bit_length())]


def tp_degrees(model: str, interconnect: str, limit: int = MAX_TP_DEGREE) -> list[int]:
    """TP degrees up to ``limit`` that divide the model's attention heads and fit the interconnect's mesh.

    Examples
    --------
    >>> tp_degrees("llama-3-70b", "nvlink4:switch")
    [1, 2, 4, 8]
    """
    cfg = get_model(model)
    ic = get_interconnect(interconnect)
    top = min(limit, ic.mesh_size) if ic.topology == "mesh" else limit
    return [t for t in range(1, top + 1) if cfg.num_attention_heads % t == 0 and t & (t - 1) == 0]


def _is_table3_setting(inputs: TPInputs) -> bool:
    return (inputs.model == "llama-3-70b" and inputs.gpu == "h200_sxm" and inputs.tp_size == 2
            and inputs.prompt_len == 8192 and inputs.output_len == 256)


def _request(inputs: TPInputs, interconnect: str, **changes) -> RequestThroughput:
    values = dict(model=inputs.model, gpu=inputs.gpu, tp_size=inputs.tp_size, interconnect=interconnect,
                  batch=inputs.batch, prompt_len=inputs.prompt_len, output_len=inputs.output_len, dtype=inputs.dtype)
    values.update(changes)
    return tp_request(values.pop("model"), **values)


def _speedups(inputs: TPInputs, interconnect: str, degrees: list[int]) -> tuple[list[float], list[float]]:
    ic = get_interconnect(interconnect)
    common = dict(fabric=ic.replace(gpu=inputs.gpu), batch=inputs.batch, prompt_len=inputs.prompt_len,
                  dtype=inputs.dtype)
    decode = [tp_speedup(inputs.model, tp_size=t, phase="decode", context_len=inputs.prompt_len + inputs.output_len // 2,
                         **common) for t in degrees]
    prefill = [tp_speedup(inputs.model, tp_size=t, phase="prefill", **common) for t in degrees]
    return decode, prefill


_CURVES: dict = {}
"""Recent curves of :func:`tp_update` by what they depend on (:func:`_kept`)."""

_CURVES_SIZE = 64
"""How many curves :data:`_CURVES` keeps (the oldest goes first)."""


def _kept(key, compute) -> list[list]:
    """``compute()`` (a tuple of lists), kept under ``key`` for the next live update; returned as new lists."""
    value = _CURVES.get(key)
    if value is None:
        value = compute()
        if len(_CURVES) >= _CURVES_SIZE:
            del _CURVES[next(iter(_CURVES))]
        _CURVES[key] = value
    return [list(v) for v in value]


def _bar_label(interconnect: str) -> str:
    """The interconnect's label on two lines (bar categories of a narrow page)."""
    label = get_interconnect(interconnect).label.replace(" (via host memory)", "")
    for sep in (" via ", " P2P mesh", ", "):
        if sep in label:
            head, tail = label.split(sep, 1)
            return f"{head}<br>{sep.strip(', ')} {tail.strip()}".replace("<br> ", "<br>")
    return label


LIVE_BAR = "per layer"
"""The one bar category of each bar panel of the single-interconnect figure (live modes): the same for every
interconnect, which the title names, so that no update renames a category."""


def _trace_names(interconnects: tuple[str, ...]) -> list[str]:
    """Names of the traces of :func:`tp_figure`, in order (legend and hover).

    Several interconnects (the static explorer): the model's lines are named by their interconnect. One (the live
    modes): named by what they show, the same for every input, so that an update changes no name (the title names the
    interconnect): a live update then only moves data, which the book draws without plotly's full redraw.
    """
    names = ["compute", "all_reduce"] * 2
    if len(interconnects) == 1:
        names += ["decode speed-up (model)", "prefill speed-up (model)", "output tok/s per GPU (model)"]
    else:
        for k in interconnects:
            label = _bar_label(k)
            names += [label, f"{label} (prefill)", f"{label} (tokens/s)"]
    return names + ["ideal (linear) speed-up"] + [f"NVIDIA Table 3: {board}, H200 TP=2" for board in TABLE3_BOARDS.values()]


def _colors(n: int) -> list[str]:
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    return [palette[i % len(palette)] for i in range(n)]


def tp_figure(inputs: TPInputs | None = None, interconnects: tuple[str, ...] | None = None) -> go.Figure:
    """Four panels: prefill and decode time per layer (compute vs all_reduce), speed-up vs TP degree,
    output tokens/s per GPU vs batch.

    Parameters
    ----------
    inputs : TPInputs, optional
        Default ``TPInputs()``.
    interconnects : tuple of str, optional
        Interconnects drawn side by side (default: ``inputs.interconnect`` alone, as in the live widget).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: [0, 1] prefill compute and communication bars, [2, 3] decode bars (one bar per
        interconnect); per interconnect three lines (decode speed-up, prefill speed-up, tokens/s per GPU
        vs batch); the ideal speed-up; NVIDIA's Table 3 points (P2P mesh, NVSwitch). With one interconnect
        (the live modes) no input changes a trace's name, visibility or the bar category: the title names the
        interconnect, and NVIDIA's points are empty (``None``) outside the setting they were published for.

    Raises
    ------
    GpucommError
        For inputs the model refuses.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    inputs = check_inputs(inputs or TPInputs())
    interconnects = tuple(interconnects or (inputs.interconnect,))
    single = len(interconnects) == 1
    labels = [LIVE_BAR] if single else [_bar_label(k) for k in interconnects]
    fig = make_subplots(rows=2, cols=2, vertical_spacing=0.2, horizontal_spacing=0.14,
                        subplot_titles=("prefill: time per layer", "decode: time per layer (one step)",
                                        "speed-up vs TP degree (over 1 GPU)", "output tokens/s per GPU vs batch"))
    names = iter(_trace_names(interconnects))
    for col, (phase, unit) in enumerate((("prefill", "ms"), ("decode", "us")), start=1):
        for part, color in (("compute", "#7f7f7f"), ("all_reduce", "#d62728")):
            fig.add_trace(go.Bar(x=labels, y=[0.0] * len(labels), name=next(names), legendgroup=part,
                                 showlegend=col == 1, marker_color=color, textposition="inside",
                                 hovertemplate=f"{phase} {part}: %{{y:.3g}} {unit} per layer"
                                               + ("<extra></extra>" if single else "<extra>%{x}</extra>")),
                          row=1, col=col)
    # Several interconnects: each one's name is in its traces' names (hover: %{fullData.name}). One: the title names
    # it and the names stay (_trace_names), as do the legend and the bar category: a live update only moves data.
    for label, color in zip(labels, _colors(len(labels))):
        fig.add_trace(go.Scatter(x=[], y=[], name=next(names), legendgroup=label, mode="lines+markers",
                                 line=dict(color=color),
                                 hovertemplate="TP=%{x}: decode %{y:.2f}x<extra>%{fullData.name}</extra>"), row=2, col=1)
        fig.add_trace(go.Scatter(x=[], y=[], name=next(names), legendgroup=label, showlegend=single,
                                 mode="lines+markers", line=dict(color=color, dash="dash"),
                                 hovertemplate="TP=%{x}: prefill %{y:.2f}x<extra>%{fullData.name}</extra>"), row=2, col=1)
        fig.add_trace(go.Scatter(x=list(BATCHES), y=[], name=next(names), legendgroup=label, showlegend=False,
                                 mode="lines+markers", line=dict(color=color),
                                 hovertemplate="batch %{x}: %{y:.3g} tok/s/GPU<extra>%{fullData.name}</extra>"), row=2, col=2)
    fig.add_trace(go.Scatter(x=[], y=[], name=next(names), mode="lines",
                             line=dict(color="#999", dash="dot"), hoverinfo="skip"), row=2, col=1)
    for symbol in ("x", "diamond"):  # NVIDIA's Table 3: P2P mesh, NVSwitch (live: no points outside its setting)
        fig.add_trace(go.Scatter(x=[], y=[], mode="markers", name=next(names),
                                 marker=dict(symbol=symbol, size=10, color="black"),
                                 hovertemplate="batch %{x}: %{y} tok/s/GPU<extra>%{fullData.name}</extra>"),
                      row=2, col=2)
    fig.update_layout(barmode="stack", template="plotly_white", height=860, margin=dict(t=110, b=60),
                      legend=dict(orientation="h", y=-0.1, yanchor="top"), title=dict(text="", y=0.98, yanchor="top"))
    if single:  # the one bar's category says nothing the title and the axis titles do not
        fig.update_xaxes(showticklabels=False, row=1)
    fig.update_yaxes(title_text="ms per layer", row=1, col=1)
    fig.update_yaxes(title_text="us per layer", row=1, col=2)
    fig.update_xaxes(title_text="TP degree", type="log", tickvals=_tp_degree_ticks(), row=2, col=1)
    fig.update_yaxes(title_text="speed-up (x)", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="batch (sequences)", type="log", tickvals=list(BATCHES), row=2, col=2)
    fig.update_yaxes(title_text="output tok/s per GPU", rangemode="tozero", row=2, col=2)
    apply_update(fig, tp_update(inputs, interconnects))
    return fig


def tp_update(inputs: TPInputs, interconnects: tuple[str, ...] | None = None) -> FigureUpdate:
    """All traces of :func:`tp_figure` for ``inputs``: the model, ready to apply or to store in a slider step.

    Raises
    ------
    GpucommError
        For inputs the model refuses (TP degree not dividing the heads, a mesh too small...).
    """
    inputs = check_inputs(inputs)
    interconnects = tuple(interconnects or (inputs.interconnect,))
    requests = [_request(inputs, k) for k in interconnects]
    bars = [[r.prefill.compute_per_layer_s * 1e3 for r in requests], [r.prefill.comm_per_layer_s * 1e3 for r in requests],
            [r.decode.compute_per_layer_s * 1e6 for r in requests], [r.decode.comm_per_layer_s * 1e6 for r in requests]]
    shares = [[f"{r.prefill.comm_share:.0%}" for r in requests], [f"{r.decode.comm_share:.0%}" for r in requests]]
    xs: list = [None] * 4
    ys: list = list(bars)
    texts: list = [[""] * len(requests), shares[0], [""] * len(requests), shares[1]]
    ideal: list[int] = []
    for k in interconnects:
        degrees = tp_degrees(inputs.model, k)
        # curves that do not depend on the TP degree (speed-ups) or on the batch (throughput): kept for the next update
        decode, prefill = _kept(("speedups", replace(inputs, tp_size=1, interconnect=k), tuple(degrees)),
                                lambda k=k, degrees=degrees: _speedups(inputs, k, degrees))
        throughput, = _kept(("throughput", replace(inputs, batch=1, interconnect=k)),
                            lambda k=k: ([_request(inputs, k, batch=b).tokens_per_s_per_gpu for b in BATCHES],))
        xs += [degrees, degrees, list(BATCHES)]
        ys += [decode, prefill, throughput]
        texts += [None, None, None]
        ideal = max(ideal, degrees, key=len)
    single = len(interconnects) == 1
    # live (one interconnect): the published points only where they apply, as points of no value elsewhere (the trace
    # and its legend entry stay, so that the update only moves data)
    published = not single or _is_table3_setting(inputs)
    xs += [ideal, list(NVIDIA_BLOG_TABLE3["batch"]), list(NVIDIA_BLOG_TABLE3["batch"])]
    ys += [[float(t) for t in ideal]] + [list(NVIDIA_BLOG_TABLE3[k]) if published else [None] * len(NVIDIA_BLOG_TABLE3[k])
                                         for k in TABLE3_BOARDS]
    texts += [None, None, None]
    n = len(ys)
    bar_x = [LIVE_BAR] if single else [_bar_label(k) for k in interconnects]
    data = {"y": ys, "x": [x if x is not None else bar_x for x in xs], "text": texts}
    r = requests[0]
    fit = "fits" if r.decode.fits_memory else "does NOT fit"
    summary = (f"{get_model(inputs.model).name}, TP={inputs.tp_size} on {get_interconnect(interconnects[0]).label}: "
               f"prefill of the batch {format_time(r.prefill.time_per_pass_s)} "
               f"(per layer {format_time(r.prefill.compute_per_layer_s)} compute + "
               f"{format_time(r.prefill.comm_per_layer_s)} all_reduce, {r.prefill.comm_share:.0%} communication; "
               f"{format_time(r.prefill.time_per_pass_s / r.prefill.num_tokens)} per prompt token); "
               f"decode {format_time(r.decode.time_per_pass_s)} per output token "
               f"(per layer {format_time(r.decode.compute_per_layer_s)} compute + "
               f"{format_time(r.decode.comm_per_layer_s)} all_reduce, {r.decode.comm_share:.0%} communication); "
               f"{r.tokens_per_s_per_user:.1f} tok/s per user, {r.tokens_per_s_per_gpu:.1f} tok/s per GPU; "
               f"weights + KV cache {r.decode.mem_bytes_per_gpu / 1e9:.0f} GB per GPU ({fit} in memory)")
    from gpucomm.model.hardware import get_gpu

    # one interconnect: named here (the summary names it in full), not by the bar category or the trace names
    over = f" over {get_interconnect(interconnects[0]).label.replace(' (via host memory)', '')}" if single else ""
    title = (f"{get_model(inputs.model).key}, TP={inputs.tp_size} x {get_gpu(inputs.gpu).name}{over}<br>"
             f"<sup>batch {inputs.batch}, prompt {inputs.prompt_len} + output {inputs.output_len} tokens, "
             f"{inputs.dtype} (model)</sup>")
    return FigureUpdate(data, tuple(range(n)), {"title.text": title}, summary)


def tp_explorer_figure(inputs: TPInputs | None = None, interconnects: tuple[str, ...] = EXPLORER_INTERCONNECTS,
                       tp_sizes: tuple[int, ...] = (1, 2, 4, 8)) -> go.Figure:
    """Static explorer: :func:`tp_figure` for several interconnects with a slider over the TP degree.

    Each step replays precomputed data (bars, tokens/s vs batch, title); the speed-up panel does not
    depend on the slider. Defaults reproduce the setting of NVIDIA's Table 3 (:data:`NVIDIA_BLOG_TABLE3`): Llama 3 70B,
    H200, prompt 8192 and 8192 + 256 tokens, P2P mesh of 8 vs NVSwitch.

    Raises
    ------
    GpucommError
        If ``inputs.tp_size`` is not one of ``tp_sizes``, or the model refuses a step.
    """
    inputs = check_inputs(inputs or TPInputs())
    if inputs.tp_size not in tp_sizes:
        raise GpucommError(f"initial TP degree {inputs.tp_size!r} is not valid: expected one of {tp_sizes}")
    fig = tp_figure(inputs, interconnects)
    n_ic = len(interconnects)
    moving = [0, 1, 2, 3] + [4 + 3 * i + 2 for i in range(n_ic)]
    steps = []
    for tp in tp_sizes:
        full = tp_update(replace(inputs, tp_size=tp), interconnects)
        update = FigureUpdate({k: [v[i] for i in moving] for k, v in full.data.items()}, tuple(moving), full.layout)
        steps.append(dict(method="update", label=str(tp), args=step_args(update)))
    fig.update_layout(sliders=[dict(active=tp_sizes.index(inputs.tp_size), steps=steps, y=1.08, yanchor="bottom",
                                    len=0.55, x=1, xanchor="right", currentvalue=dict(prefix="TP degree: "),
                                    pad=dict(t=0, b=0))],
                      height=920, margin=dict(t=170, b=60))
    return fig


def table3_rows(*, dtype: str = "fp16") -> list[dict]:
    """NVIDIA's Table 3 (:data:`NVIDIA_BLOG_TABLE3`) next to the model, one row per batch size.

    The setting of the table: Llama 3 70B, H200 SXM, TP=2, 8192 prompt + 256 output tokens; P2P mesh of 8
    (``nvlink4:mesh8``) vs NVSwitch (``nvlink4:switch``). Output tokens/s per GPU.

    Returns
    -------
    list of dict
        ``batch``, ``published_mesh``, ``model_mesh``, ``published_switch``, ``model_switch``,
        ``published_advantage`` and ``model_advantage`` (switch / mesh).

    Examples
    --------
    >>> row = table3_rows()[-1]
    >>> row["batch"], row["published_advantage"] > 1.4, row["model_advantage"] > 1.3
    (32, True, True)
    """
    rows = []
    for i, batch in enumerate(NVIDIA_BLOG_TABLE3["batch"]):
        model = {k: tp_request("llama-3-70b", gpu="h200_sxm", tp_size=2, interconnect=k, batch=batch, prompt_len=8192,
                               output_len=256, dtype=dtype).tokens_per_s_per_gpu
                 for k in ("nvlink4:mesh8", "nvlink4:switch")}
        published = {k: NVIDIA_BLOG_TABLE3[k][i] for k in model}
        rows.append({"batch": batch, "published_mesh": published["nvlink4:mesh8"], "model_mesh": model["nvlink4:mesh8"],
                     "published_switch": published["nvlink4:switch"], "model_switch": model["nvlink4:switch"],
                     "published_advantage": published["nvlink4:switch"] / published["nvlink4:mesh8"],
                     "model_advantage": model["nvlink4:switch"] / model["nvlink4:mesh8"]})
    return rows
