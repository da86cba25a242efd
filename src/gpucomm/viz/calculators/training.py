"""Training communication calculator: DP / FSDP / PP / TP bytes and time per step, with and without overlap.

The communication model is :func:`gpucomm.model.training.step_comm`; the compute time it is
overlapped with comes from :func:`step_compute_s` (6 FLOP per parameter per token at a model
FLOP utilisation). Static HTML: :func:`training_explorer_figure`; live:
:func:`gpucomm.viz.widgets.calculators.build_training_widget`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpucomm import GpucommError
from gpucomm.model.planning import LLAMA3_MFU, training_compute_s
from gpucomm.model.training import STRATEGIES, step_comm
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
    network_choices,
    param,
    step_args,
)

if TYPE_CHECKING:  # plotly is imported where a figure is built: the book's live mode runs the updates without it
    import plotly.graph_objects as go

__all__ = ["TrainingInputs", "step_compute_s", "training_results", "training_figure", "training_update",
           "training_explorer_figure", "STRATEGY_LABELS", "CONTROL_ROWS"]

CONTROL_ROWS = (("model", "gpu", "mfu"), ("num_gpus", "gpus_per_node", "interconnect", "network"),
                ("global_batch_tokens", "seq_len", "micro_batch"), ("grad_dtype", "act_dtype"))
"""Fields of :class:`TrainingInputs` per row of controls, in the live widget and in the book's live mode."""

STRATEGY_LABELS = {"dp": "DP (all_reduce)", "fsdp": "FSDP / ZeRO-3", "pp": "PP (stage boundary)", "tp": "TP"}

LLAMA3_MFU_URL = "https://arxiv.org/abs/2407.21783"
"""The Llama 3 Herd of Models, Table 4: 38-43 % BF16 model FLOP utilisation on 8K-16K H100s (the default MFU)."""


def step_compute_s(model: str, *, gpu: str, num_gpus: int, tokens: int, mfu: float = LLAMA3_MFU) -> float:
    """Compute time of one training step in s: :func:`gpucomm.model.planning.training_compute_s` (6 FLOP per
    parameter per token at a model FLOP utilisation), named as the calculator's inputs are.

    Examples
    --------
    >>> round(step_compute_s("llama-3-8b", gpu="h100_sxm5", num_gpus=8, tokens=4 * 2**20, mfu=0.4), 1)
    63.8
    """
    return training_compute_s(model, gpu=gpu, num_gpus=num_gpus, global_batch_tokens=tokens, mfu=mfu)


@dataclass(frozen=True)
class TrainingInputs:
    """Inputs of the training communication calculator."""

    model: str = param("llama-3-70b", label="model", choices=model_choices, help="Transformer preset.")
    num_gpus: int = param(8, label="GPUs", unit="GPUs", min=2, max=100_000,
                          help="GPUs in the group: DP/FSDP replicas, PP stages, or TP degree.")
    gpus_per_node: int = param(8, label="GPUs per node", unit="GPUs", min=1, max=72,
                               help="GPUs in one NVLink domain; more GPUs than this go over the network.")
    interconnect: str = param("nvlink4:switch", label="in the node", choices=interconnect_choices,
                              help="Link between the GPUs of a node and how it is wired.")
    network: str = param("ib_ndr", label="network", choices=network_choices,
                         help="Scale-out port between nodes (one NIC per GPU).")
    gpu: str = param("h100_sxm5", label="GPU", choices=gpu_choices, help="Sets the compute time (dense BF16 FLOP/s).")
    mfu: float = param(0.4, label="MFU", min=0.01, max=1.0,
                       help="Model FLOP utilisation of the compute (Llama 3: 0.38-0.43 on H100).")
    global_batch_tokens: int = param(4 * 2**20, label="tokens per step", unit="tokens", min=1, max=2**34,
                                     help="Global batch in tokens (Llama-3 scale: 4M-16M).")
    seq_len: int = param(8192, label="sequence", unit="tokens", min=1, max=1_048_576, help="Sequence length.")
    micro_batch: int = param(1, label="micro-batch", unit="sequences", min=1, max=4096,
                             help="Sequences per micro-batch (PP and TP message size).")
    grad_dtype: str = param("bf16", label="gradient dtype", choices=dtype_choices, help="Gradients/weights on the wire.")
    act_dtype: str = param("bf16", label="activation dtype", choices=dtype_choices, help="Activations on the wire.")

    @property
    def num_nodes(self) -> int:
        """Nodes the GPUs fill: ``ceil(num_gpus / gpus_per_node)``."""
        return -(-self.num_gpus // self.gpus_per_node)


def training_results(inputs: TrainingInputs) -> tuple[float, dict[str, object]]:
    """Compute time and :class:`gpucomm.model.training.StepComm` per strategy (with overlap against that compute).

    Returns
    -------
    (compute_s, {strategy: StepComm or GpucommError})
        A strategy the model refuses for these inputs maps to the
        error that says so, instead of raising.

    Raises
    ------
    GpucommError
        Inputs out of range; GPUs that do not fill whole nodes.
    """
    inputs = check_inputs(inputs)
    nodes = inputs.num_nodes
    if nodes > 1 and inputs.num_gpus % nodes:
        raise GpucommError(f"{inputs.num_gpus} GPUs do not spread evenly over {nodes} nodes of at most "
                           f"{inputs.gpus_per_node}: expected a multiple of {nodes} or of {inputs.gpus_per_node}")
    compute = step_compute_s(inputs.model, gpu=inputs.gpu, num_gpus=inputs.num_gpus, tokens=inputs.global_batch_tokens,
                             mfu=inputs.mfu)
    fabric = get_interconnect(inputs.interconnect)
    if fabric.topology == "mesh" and inputs.num_gpus // nodes > fabric.mesh_size:
        raise GpucommError(f"{inputs.num_gpus // nodes} GPUs per node do not fit a mesh of {fabric.mesh_size}: "
                           "expected fewer GPUs per node")
    if nodes > 1:
        fabric = fabric.replace(num_nodes=nodes, network=inputs.network)
    out: dict[str, object] = {}
    for strategy in STRATEGIES:
        try:
            out[strategy] = step_comm(inputs.model, strategy, num_gpus=inputs.num_gpus,
                                      global_batch_tokens=inputs.global_batch_tokens, seq_len=inputs.seq_len,
                                      micro_batch=inputs.micro_batch, grad_dtype=inputs.grad_dtype,
                                      act_dtype=inputs.act_dtype, compute_s=compute, overlap=True, fabric=fabric)
        except GpucommError as exc:
            out[strategy] = exc
    return compute, out


_BARS = (("volume_gb", "bytes sent per GPU", "#8c564b", 1), ("time_s", "communication, no overlap", "#d62728", 2),
         ("exposed_s", "communication left after overlap", "#1f77b4", 2))


def _add_traces(fig: go.Figure, visible: bool, legend: bool, group: str = "") -> None:
    import plotly.graph_objects as go

    labels = [STRATEGY_LABELS[s] for s in STRATEGIES]
    for key, name, color, col in _BARS:
        # volume: the value written above the bar; times: in the hover only (narrow grouped bars)
        fig.add_trace(go.Bar(x=labels, y=[None] * len(labels), name=name, legendgroup=key, showlegend=legend,
                             visible=visible, marker_color=color, text=[""] * len(labels), cliponaxis=False,
                             textposition="outside" if key == "volume_gb" else "none", textangle=0,
                             hovertemplate=f"%{{text}}<extra>%{{x}} {group}</extra>"), row=1, col=col)
    fig.add_trace(go.Scatter(x=labels, y=[None] * len(labels), name="compute per step", legendgroup="compute",
                             showlegend=legend, visible=visible, mode="lines", line=dict(color="#444", dash="dash"),
                             hovertemplate="compute %{y:.3g} s<extra></extra>"), row=1, col=2)


def _layout(fig: go.Figure) -> None:
    fig.update_yaxes(type="log", dtick=1, title_text="GB per GPU per step", row=1, col=1)
    fig.update_yaxes(type="log", dtick=1, title_text="seconds per step", row=1, col=2)
    fig.update_layout(template="plotly_white", barmode="group", height=560, margin=dict(t=110, b=60),
                      # the title's two lines hang from the figure's top, clear of it (the book's layout script pins a
                      # title that sticks out, a redraw as the page opens)
                      title=dict(y=1, yref="container", yanchor="top", pad=dict(t=20)),
                      legend=dict(orientation="h", y=-0.3, yanchor="top"))


def _subplots() -> go.Figure:
    from plotly.subplots import make_subplots

    return make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
                         subplot_titles=("communication volume per step", "communication time per step"))


def training_figure(inputs: TrainingInputs | None = None) -> go.Figure:
    """Volume and time of the communication of one step for DP, FSDP, PP and TP (log axes).

    Traces, in order: volume bars, time bars (no overlap), exposed-time bars (with overlap),
    the compute time as a dashed line.
    """
    inputs = check_inputs(inputs or TrainingInputs())
    fig = _subplots()
    _add_traces(fig, True, True)
    _layout(fig)
    apply_update(fig, training_update(inputs))
    return fig


def training_update(inputs: TrainingInputs, offset: int = 0) -> FigureUpdate:
    """The four traces of :func:`training_figure` for ``inputs`` (starting at trace ``offset``), and a summary.

    Strategies the model does not cover for these inputs are blank bars marked "not modelled".
    """
    from gpucomm.model.tp import get_model

    compute, results = training_results(inputs)
    ys: list[list] = [[], [], []]
    texts: list[list] = [[], [], []]
    parts = []
    for strategy in STRATEGIES:
        r = results[strategy]
        if isinstance(r, GpucommError):
            for row in ys:
                row.append(None)
            texts[0].append("not modelled")
            texts[1].append("not modelled")
            texts[2].append("")
            parts.append(f"{STRATEGY_LABELS[strategy]}: not modelled ({r})")
            continue
        ys[0].append(r.volume_bytes / 1e9)
        ys[1].append(r.time_s)
        ys[2].append(r.exposed_s if r.exposed_s > 0 else None)  # 0 has no place on a log axis: the label says it
        texts[0].append(_gb(r.volume_bytes))
        texts[1].append(format_time(r.time_s) + ("" if r.exposed_s > 0 else ", all hidden"))
        texts[2].append(format_time(r.exposed_s) if r.exposed_s > 0 else "")
        exposed = f"{format_time(r.exposed_s)} exposed" if r.exposed_s > 0 else "hidden by overlap"
        parts.append(f"{STRATEGY_LABELS[strategy]}: {_gb(r.volume_bytes)}, {format_time(r.time_s)} ({exposed})")
    nodes = inputs.num_nodes
    where = f"{inputs.num_gpus} GPUs" + (f" on {nodes} nodes" if nodes > 1 else "")
    summary = f"compute {format_time(compute)} per step on {where}; " + "; ".join(parts)
    # two lines, whatever the inputs: a live update writes the words into the title drawn (the book's gpucomm_live.js),
    # and one line as long as the second would be wrapped by the book's layout script (a redraw after every update)
    title = (f"{get_model(inputs.model).name}: {where}<br><sup>{get_interconnect(inputs.interconnect).label}"
             + (f" + {inputs.network}" if nodes > 1 else "") + " (model)</sup>")
    n = len(STRATEGIES)
    return FigureUpdate({"y": ys + [[compute] * n], "text": texts + [None]}, tuple(range(offset, offset + 4)),
                        {"title.text": title, "yaxis2.range": _log_range(ys[1] + ys[2] + [compute])}, summary)


def _gb(nbytes: float) -> str:
    """A volume in GB for a bar label, without scientific notation (``41,200 GB``, ``265 GB``, ``0.5 GB``)."""
    gb = nbytes / 1e9
    return f"{gb:,.0f} GB" if gb >= 1000 else f"{gb:.3g} GB"


def _log_range(values: list) -> list[float]:
    """A log-axis range (in decades) that shows every positive value, the compute line included."""
    shown = [v for v in values if v]
    return [math.log10(min(shown)) - 0.3, math.log10(max(shown)) + 0.3]


def training_explorer_figure(inputs: TrainingInputs | None = None, models: tuple[str, ...] | None = None,
                             gpu_counts: tuple[int, ...] = (2, 4, 8, 16, 64, 256)) -> go.Figure:
    """Static explorer: a dropdown over the model (which traces are visible) and a slider over the GPU count
    (the y data of every trace). GPUs beyond ``inputs.gpus_per_node`` fill more nodes over ``inputs.network``.

    Raises
    ------
    GpucommError
        If ``inputs.num_gpus`` is not in ``gpu_counts`` or ``inputs.model`` not in ``models``.
    """
    from gpucomm.model.tp import MODELS, get_model

    inputs = check_inputs(inputs or TrainingInputs())
    models = tuple(models or MODELS)
    if inputs.num_gpus not in gpu_counts or inputs.model not in models:
        raise GpucommError(f"initial GPUs {inputs.num_gpus!r} / model {inputs.model!r} is not valid: expected one of "
                           f"{gpu_counts} and of {models}")
    fig = _subplots()
    for i, model in enumerate(models):
        _add_traces(fig, model == inputs.model, True, get_model(model).name)  # legend: the visible model's
        apply_update(fig, training_update(replace(inputs, model=model), offset=4 * i))
    _layout(fig)
    steps = []
    for n in gpu_counts:
        ys, texts = [], []
        for model in models:
            u = training_update(replace(inputs, model=model, num_gpus=n))
            ys += u.data["y"]
            texts += u.data["text"]
        nodes = replace(inputs, num_gpus=n).num_nodes
        title = f"{n} GPUs" + (f" on {nodes} nodes" if nodes > 1 else "") + " (model)"
        times = [v for i, values in enumerate(ys) if i % 4 in (1, 2, 3) for v in values]
        steps.append(dict(method="update", label=str(n),
                          args=step_args(FigureUpdate({"y": ys, "text": texts}, tuple(range(4 * len(models))),
                                                      {"title.text": title, "yaxis2.range": _log_range(times)}))))
    buttons = [dict(method="restyle", label=get_model(m).name,
                    args=[{"visible": [j == i for j in range(len(models)) for _ in range(4)]}])
               for i, m in enumerate(models)]
    fig.update_layout(
        title_text=steps[gpu_counts.index(inputs.num_gpus)]["args"][1]["title.text"], height=640,
        yaxis2_range=steps[gpu_counts.index(inputs.num_gpus)]["args"][1]["yaxis2.range"],
        margin=dict(t=190, b=60),
        updatemenus=[dict(type="dropdown", buttons=buttons, active=models.index(inputs.model), x=0, xanchor="left",
                          y=1.12, yanchor="bottom")],
        sliders=[dict(active=gpu_counts.index(inputs.num_gpus), steps=steps, y=1.1, yanchor="bottom", len=0.55, x=1,
                      xanchor="right", currentvalue=dict(prefix="GPUs: "), pad=dict(t=0, b=0))])
    return fig
