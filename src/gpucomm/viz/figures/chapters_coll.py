"""Figures and small composed quantities for the chapters on NVSwitch, collectives and measuring.

Three chapters of the book draw their interactive figures from here:

* ``book/nvswitch.md``: :func:`mesh_vs_switch_figure` (bandwidth per GPU and all_reduce time vs the
  number of GPUs talking, point-to-point mesh vs NVSwitch) and :func:`tp2_throughput_figure` (the
  NVIDIA TP=2 throughput table next to the model);
* ``book/collectives.md``: :func:`algorithms_figure` (time vs size per algorithm, alpha and beta
  parts apart, a dropdown over the collective and a slider over the GPU count);
* ``book/measuring.md``: :func:`logs_vs_model_figure` (busbw of the bundled nccl-tests logs vs the
  model, a dropdown per log).

Every figure works in static HTML: plotly's own buttons, dropdowns and sliders switch between data
computed in advance. The quantities the pages need and the model does not return directly
(:func:`request_throughput`, :func:`wire_bytes_per_link`, :func:`protocol_crossover_bytes`,
:func:`switch_board`) are compositions of model calls, documented below; they add no new physics.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from importlib import resources

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES, busbw_factor, check_collective
from gpucomm.model.cost import (steps_and_wire_bytes, collective_cost, make_fabric, pair_bw_bytes_per_s,
                          per_gpu_bw_bytes_per_s)
from gpucomm.model.hardware import get_gpu, get_link, get_nvswitch, get_system
from gpucomm.measure.nccl_tests_log import ParsedLog
from gpucomm.model.planning import ServingConfig
from gpucomm.model.units import format_size, format_time

__all__ = [
    "NVIDIA_BLOG_URL", "SEED_TP2_BATCH_THROUGHPUT", "RequestThroughput", "request_throughput", "steps_and_wire_bytes",
    "wire_bytes_per_link",
    "protocol_crossover_bytes", "SwitchBoard", "switch_board", "mleng_h200_sweep", "mesh_vs_switch_figure",
    "tp2_throughput_figure", "SHOWN_ALGORITHMS", "algorithms_figure", "LogEntry", "logs_vs_model_figure",
    "busbw_factors_table",
]

NVIDIA_BLOG_URL = ("https://developer.nvidia.com/blog/"
                   "nvidia-nvlink-and-nvidia-nvswitch-supercharge-large-language-model-inference/")
"""NVIDIA Technical Blog, Aug 2024: the English original of seed article 001."""

SEED_TP2_BATCH_THROUGHPUT = {1: (25, 26), 2: (44, 47), 4: (66, 76), 8: (87, 110), 16: (103, 142), 32: (112, 168)}
"""Table 3 of :data:`NVIDIA_BLOG_URL` (seed 001): batch -> (point-to-point, NVSwitch) throughput in tokens/s per GPU.

Llama 3.1 70B on H200, TP=2, ISL/OSL = 8K/256, "throughput modeled using internal measurements". The
point-to-point system is hypothetical: 8 GPUs whose 900 GB/s (both directions) is split into seven
128 GB/s (both directions) links, one to each other GPU."""

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _sig(values, digits: int = 4) -> list:
    """Round to ``digits`` significant digits (smaller figure JSON); None stays None."""
    out = []
    for v in values:
        if v is None or v == 0 or not math.isfinite(v):
            out.append(v if v is None or v == 0 else None)
        else:
            out.append(float(f"{v:.{digits}g}"))
    return out


def _y_from_top(px: float, *, height: int, top: int, bottom: int) -> float:
    """Paper y of a point ``px`` pixels below the figure's top edge (updatemenus have no container coordinates)."""
    return 1 + (top - px) / (height - top - bottom)


def _title(text: str) -> dict:
    """A title pinned to the top-left corner, clear of the controls placed under it."""
    return dict(text=text, x=0.01, xanchor="left", y=0.985, yanchor="top")


def _size_grid(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    sizes, s = [], min_bytes
    while s <= max_bytes:
        sizes.append(s)
        s *= factor
    return sizes


def _size_axis_ticks(sizes: list[int], every: int = 4) -> tuple[list[int], list[str]]:
    ticks = [s for s in sizes if round(math.log2(s)) % every == round(math.log2(sizes[0])) % every]
    return ticks, [format_size(t) for t in ticks]


# ----------------------------------------------------------------------------------------------- quantities

@dataclass(frozen=True)
class RequestThroughput:
    """One batch of requests served start to finish by one TP group. Times in s, rates in tokens/s.

    Attributes
    ----------
    prefill_s : float
        Prefill of the whole batch (``batch x isl`` tokens), communication included.
    decode_step_s : float
        One decode step at the mean context length ``isl + osl / 2``.
    request_s : float
        ``prefill_s + osl x decode_step_s``: the batch from first prompt token to last output token.
    tokens_per_s_per_gpu : float
        Output tokens per second per GPU: ``batch x osl / request_s / tp_size``.
    tokens_per_s_per_user : float
        Decode speed one user sees: ``1 / decode_step_s``.
    prefill_comm_share, decode_comm_share : float
        Share of the prefill and of a decode step spent in all_reduce.
    fits_memory : bool
        Weights and KV cache of the batch fit in each GPU's memory.
    """

    prefill_s: float
    decode_step_s: float
    request_s: float
    tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    prefill_comm_share: float
    decode_comm_share: float
    fits_memory: bool


def request_throughput(model: str, config: ServingConfig, *, tp_size: int, batch: int, isl: int, osl: int,
                       dtype: str = "fp16") -> RequestThroughput:
    """Output tokens/s per GPU of a batch served start to finish (prefill, then ``osl`` decode steps).

    Parameters
    ----------
    model : str
        Model preset (``"llama-3-70b"``).
    config : ServingConfig
        GPU, link and fabric (``fabric={"topology": "mesh", "mesh_size": 8}`` for the seed's
        point-to-point board).
    tp_size : int
        TP degree.
    batch : int
        Requests served together, >= 1.
    isl, osl : int
        Input (prompt) and output sequence lengths in tokens, >= 1.
    dtype : str
        Weights, activations and KV cache dtype.

    Returns
    -------
    RequestThroughput

    Raises
    ------
    GpucommError
        Lengths below 1, or any error of :func:`gpucomm.model.tp.tp_step`.

    Notes
    -----
    A composition of :func:`gpucomm.model.tp.tp_step` (roofline compute + all_reduce, no overlap):
    ``request_s = prefill(batch, isl) + osl x decode(batch, context = isl + osl/2)``. This is static
    batching: every request of the batch starts and ends together, which is what "throughput at a
    fixed batch size" (Table 3 of :data:`NVIDIA_BLOG_URL`) measures; in-flight batching overlaps the
    prefill of new requests with the decode of others and gives somewhat higher numbers.

    Examples
    --------
    >>> switch = ServingConfig("NVSwitch", "h200_sxm", "nvlink4")
    >>> mesh = ServingConfig("point-to-point", "h200_sxm", "nvlink4", fabric={"topology": "mesh", "mesh_size": 8})
    >>> a = request_throughput("llama-3-70b", switch, tp_size=2, batch=32, isl=8192, osl=256)
    >>> b = request_throughput("llama-3-70b", mesh, tp_size=2, batch=32, isl=8192, osl=256)
    >>> round(a.tokens_per_s_per_gpu / b.tokens_per_s_per_gpu, 1)
    1.4
    """
    for name, value in (("input length", isl), ("output length", osl)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive integer number of tokens")
    pre = config.step(model, tp_size=tp_size, phase="prefill", batch=batch, prompt_len=isl, dtype=dtype)
    dec = config.step(model, tp_size=tp_size, phase="decode", batch=batch, prompt_len=isl,
                      context_len=isl + osl // 2, dtype=dtype)
    request_s = pre.step_s + osl * dec.step_s
    return RequestThroughput(pre.step_s, dec.step_s, request_s, batch * osl / request_s / tp_size,
                             dec.tokens_per_s_per_user, pre.comm_share, dec.comm_share, dec.fits_memory)




def wire_bytes_per_link(collective: str, msg_bytes: float, *, num_ranks: int, algorithm: str) -> float:
    """Bytes the busiest GPU link carries per direction in one collective (see :func:`steps_and_wire_bytes`).

    Examples
    --------
    >>> wire_bytes_per_link("all_reduce", 8.0, num_ranks=8, algorithm="ring")
    14.0
    >>> wire_bytes_per_link("all_reduce", 8.0, num_ranks=8, algorithm="nvls")
    9.0
    """
    return steps_and_wire_bytes(collective, msg_bytes, num_ranks=num_ranks, algorithm=algorithm)[1]


def protocol_crossover_bytes(collective: str, *, num_ranks: int, link: str, algorithm: str = "ring",
                             **fabric) -> int:
    """Smallest power-of-two message size at which the Simple protocol is cheaper than LL, in bytes.

    Parameters
    ----------
    collective : str
        torch.distributed name.
    num_ranks : int
        GPUs taking part.
    link : str
        Catalog link key.
    algorithm : str
        An algorithm that runs both protocols (not ``nvls``, which is Simple only).
    **fabric
        Passed to :func:`gpucomm.model.cost.collective_cost` (``p2p``, ``topology``...).

    Returns
    -------
    int
        Size in bytes (a power of two from 8 B to 64 GiB).

    Raises
    ------
    GpucommError
        If Simple never wins below 64 GiB, or any error of :func:`gpucomm.model.cost.collective_cost`.

    Notes
    -----
    Scans powers of two with ``collective_cost(..., protocol="LL")`` and ``protocol="Simple"``:
    LL pays per-step latency but halves the bandwidth (``cal.LL_BW_FRACTION``), Simple pays a large
    fixed start-up cost at full bandwidth. NCCL's tuner makes the same comparison
    (``src/graph/tuning.cc``).

    Examples
    --------
    >>> protocol_crossover_bytes("all_reduce", num_ranks=8, link="nvlink4") > 2**20
    True
    """
    for size in _size_grid(8, 64 * 2**30):
        ll = collective_cost(collective, size, num_ranks=num_ranks, link=link, algorithm=algorithm, protocol="LL",
                             **fabric)
        simple = collective_cost(collective, size, num_ranks=num_ranks, link=link, algorithm=algorithm,
                                 protocol="Simple", **fabric)
        if simple.time_s < ll.time_s:
            return size
    raise GpucommError(f"the Simple protocol never beats LL for {collective} on {num_ranks} x {link} below 64 GiB")


@dataclass(frozen=True)
class SwitchBoard:
    """How the GPUs of one system reach the NVSwitch chips. Bandwidths in bytes/s.

    Attributes
    ----------
    system : str
        Catalog key.
    num_gpus, links_per_gpu : int
        GPUs in the entry and NVLink links per GPU.
    link_bw_bytes_per_s : float
        One NVLink link, one direction.
    gpu_bw_bytes_per_s : float
        One GPU, all its links, one direction.
    gpu_bidir_marketing_bytes_per_s : float
        NVIDIA's both-directions figure per GPU (never used in a formula).
    switch_chips, ports_per_chip, switch_ports, gpu_links : int
        Switch chips, NVLink ports per chip, ports in total, and GPU links that plug into them
        (``num_gpus x links_per_gpu``).
    chip_bidir_marketing_bytes_per_s : float
        One switch chip, all ports, both directions (NVIDIA's way of counting).
    aggregate_bidir_bytes_per_s : float
        All GPUs' NVLink bandwidth summed, both directions (how NVIDIA counts "130 TB/s" for NVL72).
    bisection_bytes_per_s : float
        Half of the GPUs sending to the other half at full rate, one direction:
        ``num_gpus / 2 x gpu_bw_bytes_per_s`` (a non-blocking switch delivers it).
    nvls : bool
        In-switch reduction (NVLink SHARP) available.
    """

    system: str
    num_gpus: int
    links_per_gpu: int
    link_bw_bytes_per_s: float
    gpu_bw_bytes_per_s: float
    gpu_bidir_marketing_bytes_per_s: float
    switch_chips: int
    ports_per_chip: int
    switch_ports: int
    gpu_links: int
    chip_bidir_marketing_bytes_per_s: float
    aggregate_bidir_bytes_per_s: float
    bisection_bytes_per_s: float
    nvls: bool


def switch_board(system: str) -> SwitchBoard:
    """Port and bandwidth arithmetic of an NVSwitch system, from the catalog.

    Raises
    ------
    GpucommError
        Unknown system, or a system without NVSwitch.

    Examples
    --------
    >>> b = switch_board("dgx_h100")
    >>> b.gpu_links, b.switch_ports, b.link_bw_bytes_per_s / 1e9, b.gpu_bw_bytes_per_s / 1e9
    (144, 256, 25.0, 450.0)
    >>> switch_board("gb200_nvl72").aggregate_bidir_bytes_per_s / 1e12
    129.6
    """
    sys_ = get_system(system)
    if sys_.nvswitch_key is None:
        raise GpucommError(f"system {sys_.key!r} has no NVSwitch (fabric {sys_.fabric!r}): expected one of "
                           "dgx2, dgx_a100, dgx_h100, dgx_h200, dgx_b200, gb200_nvl72")
    sw = get_nvswitch(sys_.nvswitch_key)
    gpu = get_gpu(sys_.gpu_key)
    links = gpu.nvlink_links or 0
    return SwitchBoard(
        system=sys_.key, num_gpus=sys_.num_gpus, links_per_gpu=links, link_bw_bytes_per_s=sw.port_bw_bytes_per_s,
        gpu_bw_bytes_per_s=gpu.nvlink_bw_bytes_per_s, gpu_bidir_marketing_bytes_per_s=gpu.nvlink_bidir_marketing_bytes_per_s,
        switch_chips=sys_.nvswitch_chips, ports_per_chip=sw.ports_per_chip,
        switch_ports=sys_.nvswitch_chips * sw.ports_per_chip, gpu_links=sys_.num_gpus * links,
        chip_bidir_marketing_bytes_per_s=sw.chip_bidir_marketing_bytes_per_s,
        aggregate_bidir_bytes_per_s=sys_.num_gpus * gpu.nvlink_bidir_marketing_bytes_per_s,
        bisection_bytes_per_s=sys_.num_gpus / 2 * gpu.nvlink_bw_bytes_per_s, nvls=sys_.nvls)


def mleng_h200_sweep() -> list[dict]:
    """The bundled 8x H200 torch.distributed all_reduce sweep (case C13) as result records.

    Returns
    -------
    list of dict
        ``collective``, ``num_ranks``, ``msg_bytes``, ``time_s`` (derived: bytes / algbw),
        ``algbw_bytes_per_s``, ``busbw_bytes_per_s``, by increasing size.

    Examples
    --------
    >>> rows = mleng_h200_sweep()
    >>> rows[-1]["msg_bytes"] == 16 * 2**30, rows[-1]["busbw_bytes_per_s"] / 1e9
    (True, 482.26)
    """
    text = resources.files("gpucomm.model").joinpath("data", "mleng_8xH200_torch_allreduce.csv").read_text()
    rows = csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#"))
    out = []
    for r in rows:
        size, algbw = int(r["bytes"]), float(r["algbw_GBps"]) * 1e9
        out.append({"record": "result", "collective": "all_reduce", "num_ranks": int(r["n_gpus"]), "msg_bytes": size,
                    "time_s": size / algbw, "algbw_bytes_per_s": algbw,
                    "busbw_bytes_per_s": float(r["busbw_GBps"]) * 1e9})
    return sorted(out, key=lambda r: r["msg_bytes"])


# ----------------------------------------------------------------------------------------------- NVSwitch figures

def mesh_vs_switch_figure(link: str = "nvlink4", *, mesh_size: int = 8,
                          sizes: tuple[int, ...] = (16 * 2**10, 2**20, 64 * 2**20, 2**30),
                          initial_size: int = 64 * 2**20) -> go.Figure:
    """Bandwidth per GPU and all_reduce time vs the number of GPUs talking: point-to-point mesh vs NVSwitch.

    Parameters
    ----------
    link : str
        Each GPU's NVLink (catalog key); the mesh splits it into ``mesh_size - 1`` equal peer links.
    mesh_size : int
        GPUs on the board (8 in the seed's example).
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
        ("NVSwitch: any pair (nominal)", [switch.link.bw_bytes_per_s / 1e9] * len(gpus), _COLORS[0], "dot"),
        ("NVSwitch: per GPU in the collective (effective)",
         [per_gpu_bw_bytes_per_s(switch, n) / 1e9 for n in gpus], _COLORS[0], "solid"),
        ("mesh: one pair (nominal)", [pair_bw_bytes_per_s(mesh) / 1e9] * len(gpus), _COLORS[1], "dot"),
        ("mesh: per GPU in the collective (effective)", [per_gpu_bw_bytes_per_s(mesh, n) / 1e9 for n in gpus],
         _COLORS[1], "solid"),
    ]
    for label, y, color, dash in bw:
        fig.add_trace(go.Scatter(x=gpus, y=_sig(y), name=label, mode="lines+markers", line=dict(color=color, dash=dash),
                                 hovertemplate="%{x} GPUs: %{y:.3g} GB/s<extra>" + label + "</extra>"), row=1, col=1)

    def times(size: int) -> list[list[float]]:
        out = []
        for kw in ({}, {"topology": "mesh", "mesh_size": mesh_size}):
            out.append(_sig([collective_cost("all_reduce", size, num_ranks=n, link=link, **kw).time_s * 1e6
                             for n in gpus]))
        return out

    def algos(size: int) -> list[list[str]]:
        return [[collective_cost("all_reduce", size, num_ranks=n, link=link, **kw).algorithm for n in gpus]
                for kw in ({}, {"topology": "mesh", "mesh_size": mesh_size})]

    first = len(fig.data)
    for label, y, a, color in zip(("NVSwitch", f"mesh of {mesh_size}"), times(initial_size), algos(initial_size),
                                  _COLORS[:2]):
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
    y = _y_from_top(48, height=height, top=top, bottom=bottom)
    fig.update_layout(
        title=_title(title(initial_size)), template="plotly_white", height=height, margin=dict(t=top, b=bottom),
        legend=dict(orientation="h", y=-0.2),
        updatemenus=[dict(type="buttons", direction="right", active=sizes.index(initial_size), buttons=buttons,
                          x=0.14, xanchor="left", y=y, yanchor="top", pad=dict(r=4, t=0))],
        annotations=[*fig.layout.annotations,
                     dict(text="message size:", x=0.13, xref="paper", xanchor="right", y=y, yref="paper",
                          yanchor="top", yshift=-6, showarrow=False)])
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
        :data:`SEED_TP2_BATCH_THROUGHPUT`).

    Returns
    -------
    plotly.graph_objects.Figure
        Bars: published values; lines: :func:`request_throughput`. Buttons switch between tokens/s
        per GPU and the NVSwitch advantage (ratio).
    """
    table = measured or SEED_TP2_BATCH_THROUGHPUT
    batches = sorted(table)
    configs = (ServingConfig("point-to-point", gpu, link, fabric={"topology": "mesh", "mesh_size": mesh_size}),
               ServingConfig("NVSwitch", gpu, link))
    model_tps = [[request_throughput(model, c, tp_size=2, batch=b, isl=isl, osl=osl).tokens_per_s_per_gpu
                  for b in batches] for c in configs]
    labels = [str(b) for b in batches]
    fig = go.Figure()
    for i, c in enumerate(configs):
        fig.add_trace(go.Bar(x=labels, y=[table[b][i] for b in batches], name=f"{c.label}: NVIDIA (Table 3)",
                             marker_color=_COLORS[i], opacity=0.55,
                             hovertemplate="batch %{x}: %{y} tok/s/GPU<extra>NVIDIA</extra>"))
    for i, c in enumerate(configs):
        fig.add_trace(go.Scatter(x=labels, y=_sig(model_tps[i], 3), name=f"{c.label}: model", mode="lines+markers",
                                 line=dict(color=_COLORS[i], width=3),
                                 hovertemplate="batch %{x}: %{y:.3g} tok/s/GPU<extra>model</extra>"))
    ratio_meas = [table[b][1] / table[b][0] for b in batches]
    ratio_model = [s / p for p, s in zip(*model_tps)]
    fig.add_trace(go.Bar(x=labels, y=_sig(ratio_meas, 3), name="NVSwitch advantage: NVIDIA", marker_color=_COLORS[2],
                         opacity=0.55, visible=False, hovertemplate="batch %{x}: %{y:.2f}x<extra>NVIDIA</extra>"))
    fig.add_trace(go.Scatter(x=labels, y=_sig(ratio_model, 3), name="NVSwitch advantage: model", mode="lines+markers",
                             line=dict(color=_COLORS[2], width=3), visible=False,
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
        title=_title(title + "throughput per GPU"), template="plotly_white", height=height, barmode="group",
        xaxis_title="batch size (requests served together)", yaxis_title="output tokens/s per GPU",
        margin=dict(t=top, b=bottom), legend=dict(orientation="h", y=-0.25),
        updatemenus=[dict(type="buttons", direction="right", active=0, buttons=buttons, x=0, xanchor="left",
                          y=_y_from_top(48, height=height, top=top, bottom=bottom), yanchor="top")])
    return fig


# ----------------------------------------------------------------------------------------------- collectives figure

SHOWN_ALGORITHMS = ("ring", "tree", "rhd", "one_shot", "two_shot", "nvls")
"""Algorithms drawn by :func:`algorithms_figure` (every single-node algorithm of :mod:`gpucomm.model.cost`)."""


def _algorithm_curves(collective: str, n: int, link: str, sizes: list[int]) -> tuple[list[list], list]:
    """y data for every trace slot (total, alpha, beta per algorithm, then NCCL's choice) and hover text."""
    ys: list[list] = []
    for algo in SHOWN_ALGORITHMS:
        total, alpha, beta = [], [], []
        for s in sizes:
            try:
                c = collective_cost(collective, s, num_ranks=n, link=link, algorithm=algo)
            except GpucommError:  # e.g. rhd on 6 ranks, an algorithm that does not implement the collective
                total.append(None), alpha.append(None), beta.append(None)
                continue
            total.append(c.time_s * 1e6)
            alpha.append(c.latency_s * 1e6)
            beta.append(c.transfer_s * 1e6 if c.transfer_s > 0 else None)
        ys += [_sig(total), _sig(alpha), _sig(beta)]
    auto = [collective_cost(collective, s, num_ranks=n, link=link) for s in sizes]
    ys.append(_sig([c.time_s * 1e6 for c in auto]))
    return ys, [f"{c.algorithm}/{c.protocol}" for c in auto]


def algorithms_figure(link: str = "nvlink4", *, collectives: tuple[str, ...] = COLLECTIVES,
                      gpu_counts: tuple[int, ...] = (2, 4, 8), initial_collective: str = "all_reduce",
                      initial_gpus: int = 8, min_bytes: int = 8, max_bytes: int = 16 * 2**30) -> go.Figure:
    """Time vs message size per algorithm, with the alpha (latency) and beta (bandwidth) parts drawn apart.

    Parameters
    ----------
    link : str
        Catalog link behind an NVSwitch (``nvlink4``: NVLS available).
    collectives : tuple of str
        Collectives offered by the dropdown.
    gpu_counts : tuple of int
        GPU counts offered by the slider.
    initial_collective, initial_gpus
        What the figure shows first.
    min_bytes, max_bytes : int
        Size range (powers of two).

    Returns
    -------
    plotly.graph_objects.Figure
        Left: total time (log-log) per algorithm, and NCCL's automatic choice as markers (hover
        names algorithm and protocol). Right: the alpha part (dotted) and the beta part (dashed) of
        each algorithm. The dropdown picks the collective (and installs that collective's slider);
        the slider picks the GPU count. Click a legend entry to hide an algorithm.

    Raises
    ------
    GpucommError
        Unknown link or collective; an initial value not offered.
    """
    for c in collectives:
        check_collective(c)
    if initial_collective not in collectives:
        raise GpucommError(f"initial collective {initial_collective!r} is not valid: expected one of {collectives}")
    if initial_gpus not in gpu_counts:
        raise GpucommError(f"initial GPU count {initial_gpus!r} is not valid: expected one of {gpu_counts}")
    get_link(link)
    sizes = _size_grid(min_bytes, max_bytes)
    data = {(c, n): _algorithm_curves(c, n, link, sizes) for c in collectives for n in gpu_counts}
    name = get_link(link).name.split(" (")[0]

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("total time = alpha + beta", "alpha part (dotted) and beta part (dashed)"))
    ys, hover = data[(initial_collective, initial_gpus)]
    for i, algo in enumerate(SHOWN_ALGORITHMS):
        color = _COLORS[i]
        fig.add_trace(go.Scatter(x=sizes, y=ys[3 * i], name=algo, legendgroup=algo, mode="lines",
                                 line=dict(color=color, width=2.5),
                                 hovertemplate="%{y:.3g} us<extra>" + algo + "</extra>"), row=1, col=1)
        fig.add_trace(go.Scatter(x=sizes, y=ys[3 * i + 1], name=f"{algo} alpha", legendgroup=algo, showlegend=False,
                                 mode="lines", line=dict(color=color, dash="dot"),
                                 hovertemplate="alpha %{y:.3g} us<extra>" + algo + "</extra>"), row=1, col=2)
        fig.add_trace(go.Scatter(x=sizes, y=ys[3 * i + 2], name=f"{algo} beta", legendgroup=algo, showlegend=False,
                                 mode="lines", line=dict(color=color, dash="dash"),
                                 hovertemplate="beta %{y:.3g} us<extra>" + algo + "</extra>"), row=1, col=2)
    fig.add_trace(go.Scatter(x=sizes, y=ys[-1], customdata=hover, name="NCCL-like choice (auto)", mode="markers",
                             marker=dict(symbol="circle-open", size=9, color="black"),
                             hovertemplate="%{y:.3g} us: %{customdata}<extra>auto</extra>"), row=1, col=1)

    def title(c: str, n: int) -> str:
        return f"{c} on {n} GPUs, {name} behind an NVSwitch (model)"

    def slider(c: str) -> dict:
        steps = [dict(method="update", label=str(n),
                      args=[{"y": data[(c, n)][0], "customdata": [None] * (3 * len(SHOWN_ALGORITHMS))
                             + [data[(c, n)][1]]}, {"title.text": title(c, n)}])
                 for n in gpu_counts]
        return dict(active=gpu_counts.index(initial_gpus), steps=steps, currentvalue=dict(prefix="GPUs: "),
                    x=0.05, len=0.9, y=-0.5, pad=dict(t=10))

    buttons = [dict(method="update", label=c,
                    args=[{"y": data[(c, initial_gpus)][0],
                           "customdata": [None] * (3 * len(SHOWN_ALGORITHMS)) + [data[(c, initial_gpus)][1]]},
                          {"title.text": title(c, initial_gpus), "sliders": [slider(c)]}])
               for c in collectives]
    ticks, labels = _size_axis_ticks(sizes, every=6)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=labels, title_text="message size (nccl-tests S)")
    # 0.1 us .. 1 s: the beta part of tiny messages (femtoseconds) would otherwise squash the axis
    fig.update_yaxes(type="log", title_text="time (us)", range=[-1, 6], row=1, col=1)
    fig.update_yaxes(type="log", title_text="time (us)", range=[-1, 6], row=1, col=2)
    height, top, bottom = 720, 150, 240
    fig.update_layout(
        title=_title(title(initial_collective, initial_gpus)), template="plotly_white", height=height,
        margin=dict(t=top, b=bottom), legend=dict(orientation="h", y=-0.2),
        sliders=[slider(initial_collective)],
        updatemenus=[dict(type="dropdown", active=collectives.index(initial_collective), buttons=buttons,
                          x=0, xanchor="left", y=_y_from_top(48, height=height, top=top, bottom=bottom),
                          yanchor="top")])
    return fig


# ----------------------------------------------------------------------------------------------- measuring figure

@dataclass(frozen=True)
class LogEntry:
    """One measured sweep for :func:`logs_vs_model_figure`.

    Attributes
    ----------
    label : str
        Title; the part before the first ``:`` is the dropdown label.
    records : list of dict
        Out-of-place results (``msg_bytes``, ``busbw_bytes_per_s``, ``time_s``); see
        :meth:`gpucomm.measure.nccl_tests_log.ParsedLog.as_results`.
    in_place : list of dict
        In-place results (may be empty).
    model_kwargs : dict
        Keywords for :func:`gpucomm.model.cost.collective_cost` describing the hardware (``link``...).
    line_rate_bytes_per_s : float or None
        A reference line (the link's nominal per-direction bandwidth), or None.
    note : str
        Shown under the title, in small print.
    """

    label: str
    records: list
    in_place: list = field(default_factory=list)
    model_kwargs: dict = field(default_factory=dict)
    line_rate_bytes_per_s: float | None = None
    note: str = ""

    @classmethod
    def from_log(cls, label: str, log: ParsedLog, model_kwargs: dict, *, line_rate_bytes_per_s: float | None = None,
                 note: str = "") -> "LogEntry":
        """An entry from a parsed nccl-tests log (both placements)."""
        return cls(label, log.as_results(), log.as_results(in_place=True), model_kwargs, line_rate_bytes_per_s, note)


def logs_vs_model_figure(entries: tuple[LogEntry, ...], *, initial: int = 0, points: int = 60) -> go.Figure:
    """Measured busbw vs message size, one measured sweep at a time (dropdown), with the model overlaid.

    Parameters
    ----------
    entries : tuple of LogEntry
        The sweeps; each must hold one collective on one rank count.
    initial : int
        Index of the entry shown first.
    points : int
        Points of each model curve (log-spaced over the measured sizes).

    Returns
    -------
    plotly.graph_objects.Figure
        x: message size (log); y: busbw in GB/s (1e9 B/s, per direction). Per entry: out-of-place
        and in-place measurements, the model (:func:`gpucomm.model.cost.collective_cost`) and the line
        rate. Hover gives size, time and busbw.

    Raises
    ------
    GpucommError
        No entries, an entry without records or mixing collectives or rank counts, a bad ``initial``.
    """
    if not entries:
        raise GpucommError("no measured sweeps to plot: expected at least one LogEntry")
    if not 0 <= initial < len(entries):
        raise GpucommError(f"initial entry {initial!r} is not valid: expected 0 to {len(entries) - 1}")
    fig = go.Figure()
    slots: list[list[int]] = []
    all_sizes: list[int] = []
    for k, e in enumerate(entries):
        rows = sorted(e.records, key=lambda r: r["msg_bytes"])
        if not rows:
            raise GpucommError(f"entry {e.label!r} has no records: expected the results of a sweep")
        kinds = {(r["collective"], r["num_ranks"]) for r in rows + list(e.in_place)}
        if len(kinds) != 1:
            raise GpucommError(f"entry {e.label!r} mixes collectives or rank counts {sorted(kinds)}: expected one sweep")
        (collective, n), = kinds
        sizes = [r["msg_bytes"] for r in rows]
        all_sizes += sizes
        visible = k == initial
        mine = []
        for placement, rs, symbol, color in (("out-of-place", rows, "circle", "#1f77b4"),
                                             ("in-place", sorted(e.in_place, key=lambda r: r["msg_bytes"]),
                                              "x", "#ff7f0e")):
            if not rs:
                continue
            mine.append(len(fig.data))
            fig.add_trace(go.Scatter(
                x=[r["msg_bytes"] for r in rs], y=[round(r["busbw_bytes_per_s"] / 1e9, 6) for r in rs],
                customdata=[[format_size(r["msg_bytes"]), format_time(r["time_s"])] for r in rs],
                name=f"measured, {placement}", mode="markers+lines" if placement == "out-of-place" else "markers",
                marker=dict(symbol=symbol, size=8, color=color), line=dict(width=1, color=color), visible=visible,
                hovertemplate="%{customdata[0]}: %{customdata[1]}, busbw %{y:.3g} GB/s<extra>" + placement + "</extra>"))
        lo, hi = min(sizes), max(sizes)
        grid = sorted({int(round(math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / max(points - 1, 1))))
                       for i in range(points)}) if hi > lo else [lo]
        costs = [collective_cost(collective, s, num_ranks=n, **e.model_kwargs) for s in grid]
        mine.append(len(fig.data))
        fig.add_trace(go.Scatter(
            x=grid, y=_sig([c.busbw_bytes_per_s / 1e9 for c in costs]), customdata=[c.algorithm for c in costs],
            name="model (gpucomm.model.cost)", mode="lines", line=dict(color="#2ca02c", width=3), visible=visible,
            hovertemplate="%{y:.3g} GB/s (%{customdata})<extra>model</extra>"))
        if e.line_rate_bytes_per_s:
            mine.append(len(fig.data))
            fig.add_trace(go.Scatter(
                x=[lo, hi], y=[e.line_rate_bytes_per_s / 1e9] * 2, name="link, nominal per direction", mode="lines",
                line=dict(color="black", dash="dash"), visible=visible,
                hovertemplate="%{y:.4g} GB/s<extra>nominal link</extra>"))
        slots.append(mine)

    def title(e: LogEntry) -> str:
        return e.label + (f"<br><sup>{e.note}</sup>" if e.note else "")

    def pinned(e: LogEntry) -> dict:
        return dict(_title(title(e)), y=0.97)

    total = len(fig.data)
    buttons = [dict(method="update", label=e.label.split(":")[0],
                    args=[{"visible": [i in slots[k] for i in range(total)]}, {"title.text": title(e)}])
               for k, e in enumerate(entries)]  # title.text only: the pinned position set below stays
    ticks = [2**p for p in range(0, 40, 3) if min(all_sizes) <= 2**p <= max(all_sizes) * 2]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[format_size(t) for t in ticks],
                     title_text="message size (binary units: 1 KiB = 1024 B)")
    fig.update_yaxes(title_text="busbw (GB/s = 1e9 B/s, per direction)", rangemode="tozero")
    height, top, bottom = 600, 150, 140
    fig.update_layout(
        title=pinned(entries[initial]), template="plotly_white", height=height, margin=dict(t=top, b=bottom),
        legend=dict(orientation="h", y=-0.25),
        updatemenus=[dict(type="dropdown", active=initial, buttons=buttons, x=0, xanchor="left",
                          y=_y_from_top(72, height=height, top=top, bottom=bottom), yanchor="top")])
    return fig


def busbw_factors_table(num_ranks: int) -> list[tuple[str, float]]:
    """(collective, nccl-tests busbw factor) for every collective at ``num_ranks`` ranks.

    Examples
    --------
    >>> dict(busbw_factors_table(8))["all_reduce"]
    1.75
    """
    return [(c, busbw_factor(c, num_ranks)) for c in COLLECTIVES]
