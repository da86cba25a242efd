"""P2P mesh vs NVSwitch: bandwidth per pair and per GPU, and collective time, as more GPUs talk.

On a point-to-point board each GPU splits its NVLink bandwidth over fixed links to its
``mesh_size - 1`` peers; a collective among ``n`` of them can use only ``n - 1`` of those links.
Behind an NVSwitch every GPU reaches every other at its full bandwidth, whatever ``n``. The
numbers come from :func:`gpucomm.model.fabric.make_fabric`, :func:`~gpucomm.model.cost.pair_bw_bytes_per_s`,
:func:`~gpucomm.model.cost.per_gpu_bw_bytes_per_s` and :func:`~gpucomm.model.cost.collective_cost`
(``topology="mesh"`` vs ``"switch"``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpucomm.model.cost import collective_cost, pair_bw_bytes_per_s, per_gpu_bw_bytes_per_s
from gpucomm.model.fabric import make_fabric
from gpucomm.model.units import format_size, format_time
from gpucomm.viz.calculators.inputs import (
    FigureUpdate,
    algorithm_choices,
    apply_update,
    check_inputs,
    collective_choices,
    param,
    step_args,
)

if TYPE_CHECKING:  # plotly is imported where a figure is built: the book's live mode runs the updates without it
    import plotly.graph_objects as go

__all__ = ["MeshInputs", "mesh_curves", "mesh_figure", "mesh_update", "mesh_explorer_figure", "nvlink_choices",
           "CONTROL_ROWS"]

_TRACES_PER_LINK = 7

CONTROL_ROWS = (("link", "mesh_size"), ("collective", "algorithm", "msg_bytes"))
"""Fields of :class:`MeshInputs` per row of controls, in the live widget and in the book's live mode."""


def nvlink_choices() -> list[tuple[str, str]]:
    """NVLink generations of the link catalog (a P2P mesh is an NVLink board)."""
    from gpucomm.model.hardware import LINKS

    return [(link.name, key) for key, link in LINKS.items() if link.kind == "nvlink"]


@dataclass(frozen=True)
class MeshInputs:
    """Inputs of the mesh vs NVSwitch calculator."""

    link: str = param("nvlink4", label="link", choices=nvlink_choices,
                      help="Each GPU's NVLink (per-direction bandwidth from the catalog).")
    mesh_size: int = param(8, label="GPUs on the board", unit="GPUs", min=2, max=64,
                           help="GPUs wired to each other point to point (the mesh), or behind the switch.")
    collective: str = param("all_reduce", label="collective", choices=collective_choices,
                            help="The collective timed in the middle panel.")
    algorithm: str = param("auto", label="algorithm", choices=algorithm_choices,
                           help="auto: NCCL-like choice (NVLS behind an NVLink 4+ switch); ring: the same algorithm on both.")
    msg_bytes: int = param(128 * 2**20, label="size", unit="bytes", min=1, max=2**40,
                           help="Message size, e.g. 128MiB (one Llama-3-70B TP all_reduce of an 8K-token prompt).")


def mesh_curves(inputs: MeshInputs) -> dict[str, list]:
    """Bandwidths (GB/s per direction) and times (us) for 2 .. ``mesh_size`` communicating GPUs.

    Returns
    -------
    dict
        ``gpus``; ``mesh_pair_gbs`` (nominal, one peer link), ``mesh_gpu_gbs`` (effective, what a
        collective of n GPUs gets per GPU), ``switch_pair_gbs``, ``switch_gpu_gbs``; ``mesh_us``,
        ``switch_us`` (collective time); ``slowdown`` (mesh / switch); ``mesh_pair_bidir_gbs`` and
        ``switch_pair_bidir_gbs``: the same nominal pair bandwidths with both directions added, as
        datasheets and the table of NVIDIA's blog "NVIDIA NVLink and NVIDIA NVSwitch Supercharge
        Large Language Model Inference" (Aug 2024) quote them (for comparison only, never in a formula).

    Raises
    ------
    GpucommError
        From the cost model (an algorithm that does not apply to a mesh, such as nvls).
    """
    inputs = check_inputs(inputs)
    mesh = make_fabric(inputs.link, topology="mesh", mesh_size=inputs.mesh_size)
    switch = make_fabric(inputs.link)
    gpus = list(range(2, inputs.mesh_size + 1))
    out: dict[str, list] = {"gpus": gpus, "mesh_pair_gbs": [pair_bw_bytes_per_s(mesh) / 1e9] * len(gpus),
                            "switch_pair_gbs": [pair_bw_bytes_per_s(switch) / 1e9] * len(gpus),
                            "mesh_gpu_gbs": [per_gpu_bw_bytes_per_s(mesh, n) / 1e9 for n in gpus],
                            "switch_gpu_gbs": [per_gpu_bw_bytes_per_s(switch, n) / 1e9 for n in gpus]}
    bidir = mesh.link.bidir_marketing_bytes_per_s / mesh.link.bw_bytes_per_s  # 2 for every NVLink of the catalog
    out["mesh_pair_bidir_gbs"] = [v * bidir for v in out["mesh_pair_gbs"]]
    out["switch_pair_bidir_gbs"] = [v * bidir for v in out["switch_pair_gbs"]]
    out["mesh_us"] = [collective_cost(inputs.collective, inputs.msg_bytes, num_ranks=n, fabric=mesh,
                                      algorithm=inputs.algorithm).time_s * 1e6 for n in gpus]
    out["switch_us"] = [collective_cost(inputs.collective, inputs.msg_bytes, num_ranks=n, fabric=switch,
                                        algorithm=inputs.algorithm).time_s * 1e6 for n in gpus]
    out["slowdown"] = [m / s for m, s in zip(out["mesh_us"], out["switch_us"])]
    return out


_BW_KEYS = (("mesh_pair_gbs", "P2P mesh: one peer link (nominal)", "dot", "#d62728"),
            ("mesh_gpu_gbs", "P2P mesh: per GPU, collective (effective)", "solid", "#d62728"),
            ("switch_pair_gbs", "NVSwitch: any pair (nominal)", "dot", "#1f77b4"),
            ("switch_gpu_gbs", "NVSwitch: per GPU, collective (effective)", "solid", "#1f77b4"))


def _add_link_traces(fig: go.Figure, link_name: str, visible: bool, legend: bool) -> None:
    import plotly.graph_objects as go

    for key, name, dash, color in _BW_KEYS:
        fig.add_trace(go.Scatter(x=[], y=[], name=name, legendgroup=key, showlegend=legend, visible=visible,
                                 mode="lines+markers", line=dict(color=color, dash=dash),
                                 hovertemplate="%{x} GPUs: %{y:.1f} GB/s<extra>" + link_name + "</extra>"), row=1, col=1)
    for key, name, color in (("mesh_us", "P2P mesh", "#d62728"), ("switch_us", "NVSwitch", "#1f77b4")):
        fig.add_trace(go.Scatter(x=[], y=[], name=f"{name}: time", legendgroup=key, showlegend=legend, visible=visible,
                                 mode="lines+markers", line=dict(color=color),
                                 hovertemplate="%{x} GPUs: %{y:.3g} us<extra>" + name + "</extra>"), row=2, col=1)
    fig.add_trace(go.Scatter(x=[], y=[], name="mesh time / switch time", showlegend=legend, visible=visible,
                             mode="lines+markers", line=dict(color="#444"),
                             hovertemplate="%{x} GPUs: %{y:.2f}x slower<extra>" + link_name + "</extra>"), row=2, col=2)


def _layout(fig: go.Figure) -> None:
    fig.update_xaxes(title_text="GPUs communicating", dtick=1)
    fig.update_yaxes(dtick=1, row=2, col=1)
    fig.update_yaxes(title_text="GB/s per direction", rangemode="tozero", row=1, col=1)
    from gpucomm.viz.figures._layout import log_ticks_125  # plotly-side helper: not in the Pyodide zip path

    # 1-2-5 labels written in full, 0.1 us to 50 s: at least 3 on a short range, and the book's layout script (which
    # would write them so after the first paint, a full redraw) has nothing to do
    fig.update_yaxes(title_text="time (us)", type="log", row=2, col=1, **log_ticks_125(-1, 7))
    fig.update_yaxes(title_text="x slower on the mesh", rangemode="tozero", row=2, col=2)
    fig.update_layout(template="plotly_white", height=760, margin=dict(t=110, b=60),
                      title=dict(y=0.98, yanchor="top"), legend=dict(orientation="h", y=-0.12, yanchor="top"))


def _subplots() -> go.Figure:
    from plotly.subplots import make_subplots

    return make_subplots(rows=2, cols=2, specs=[[{"colspan": 2}, None], [{}, {}]], horizontal_spacing=0.14,
                         vertical_spacing=0.16,
                         subplot_titles=("bandwidth per direction vs GPUs communicating", "collective time",
                                         "mesh slowdown"))


def mesh_figure(inputs: MeshInputs | None = None) -> go.Figure:
    """Bandwidth per pair and per GPU, collective time and mesh slowdown vs GPUs communicating.

    Returns
    -------
    plotly.graph_objects.Figure
        Seven traces (four bandwidths, two times, one ratio); see :func:`mesh_curves`.
    """
    inputs = check_inputs(inputs or MeshInputs())
    fig = _subplots()
    _add_link_traces(fig, inputs.link, True, True)
    _layout(fig)
    apply_update(fig, mesh_update(inputs))
    return fig


def _title(inputs: MeshInputs) -> str:
    from gpucomm.model.hardware import get_link

    algo = "" if inputs.algorithm == "auto" else f" ({inputs.algorithm})"
    return (f"{get_link(inputs.link).name.split(' (')[0]}: {inputs.mesh_size}-GPU P2P mesh vs NVSwitch, "
            f"{inputs.collective}{algo} of {format_size(inputs.msg_bytes)} (model)")


def mesh_update(inputs: MeshInputs, offset: int = 0) -> FigureUpdate:
    """The seven traces of :func:`mesh_figure` for ``inputs`` (starting at trace ``offset``).

    Raises
    ------
    GpucommError
        For inputs out of range or refused by the model.
    """
    c = mesh_curves(inputs)
    keys = [k for k, *_ in _BW_KEYS] + ["mesh_us", "switch_us", "slowdown"]
    n = c["gpus"][-1]
    summary = (f"{n} GPUs: mesh {c['mesh_gpu_gbs'][-1]:.0f} GB/s per GPU vs switch {c['switch_gpu_gbs'][-1]:.0f} GB/s; "
               f"2 GPUs: mesh {c['mesh_gpu_gbs'][0]:.0f} vs switch {c['switch_gpu_gbs'][0]:.0f} GB/s (effective, per direction). "
               f"{inputs.collective} of {format_size(inputs.msg_bytes)}: 2 GPUs {format_time(c['mesh_us'][0] / 1e6)} on the "
               f"mesh vs {format_time(c['switch_us'][0] / 1e6)} on the switch ({c['slowdown'][0]:.1f}x); {n} GPUs "
               f"{format_time(c['mesh_us'][-1] / 1e6)} vs {format_time(c['switch_us'][-1] / 1e6)} ({c['slowdown'][-1]:.1f}x)")
    step = gpu_tick_step(n)
    return FigureUpdate({"x": [c["gpus"]] * _TRACES_PER_LINK, "y": [c[k] for k in keys]},
                        tuple(range(offset, offset + _TRACES_PER_LINK)),
                        {"title.text": _title(inputs), **{f"{axis}.dtick": step for axis in ("xaxis", "xaxis2", "xaxis3")}},
                        summary)


def gpu_tick_step(max_gpus: int, most_ticks: int = 8) -> int:
    """GPUs between ticks of the "GPUs communicating" axes (2 .. ``max_gpus``): 1, 2, 4... so that at most about
    ``most_ticks`` labels are drawn (a tick per GPU on a mesh of 64 is 63 labels per axis, each drawn and measured
    on every redraw).

    Examples
    --------
    >>> gpu_tick_step(8), gpu_tick_step(16), gpu_tick_step(64)
    (1, 2, 8)
    """
    step = 1
    while (max_gpus - 2) / step > most_ticks:
        step *= 2
    return step


def mesh_explorer_figure(inputs: MeshInputs | None = None, links: tuple[str, ...] = ("nvlink3", "nvlink4", "nvlink5"),
                         sizes: tuple[int, ...] = tuple(2**k for k in range(9, 34, 2))) -> go.Figure:
    """Static explorer: a dropdown over the NVLink generation, a slider over the message size.

    The dropdown shows one link's traces (``visible``); the slider restyles the time and slowdown
    traces of every link (bandwidths do not depend on the size), so both controls compose.

    Raises
    ------
    GpucommError
        If ``inputs.link`` is not in ``links`` or ``inputs.msg_bytes`` not in ``sizes``.
    """
    from gpucomm import GpucommError
    from gpucomm.model.hardware import get_link

    inputs = check_inputs(inputs or MeshInputs())
    if inputs.link not in links or inputs.msg_bytes not in sizes:
        raise GpucommError(f"initial link {inputs.link!r} / size {inputs.msg_bytes!r} is not valid: expected one of "
                           f"{links} and of {sizes}")
    fig = _subplots()
    for i, link in enumerate(links):
        _add_link_traces(fig, get_link(link).name, link == inputs.link, True)  # legend: the visible link's
        apply_update(fig, mesh_update(replace(inputs, link=link), offset=i * _TRACES_PER_LINK))
    _layout(fig)
    timed = [i * _TRACES_PER_LINK + j for i in range(len(links)) for j in (4, 5, 6)]
    steps = []
    for size in sizes:
        ys = []
        for link in links:
            ys += mesh_update(replace(inputs, link=link, msg_bytes=size)).data["y"][4:]
        title = _title(replace(inputs, msg_bytes=size)).split(": ", 1)[1]
        update = FigureUpdate({"y": ys}, tuple(timed), {"title.text": title})
        steps.append(dict(method="update", label=format_size(size), args=step_args(update)))
    buttons = [dict(method="restyle", label=get_link(link).name.split(" (")[0],
                    args=[{"visible": [j == i for j in range(len(links)) for _ in range(_TRACES_PER_LINK)]}])
               for i, link in enumerate(links)]
    fig.update_layout(
        title_text=_title(inputs).split(": ", 1)[1], height=860, margin=dict(t=190, b=60),
        updatemenus=[dict(type="dropdown", buttons=buttons, active=links.index(inputs.link), x=0, xanchor="left",
                          y=1.1, yanchor="bottom")],
        sliders=[dict(active=sizes.index(inputs.msg_bytes), steps=steps, y=1.08, yanchor="bottom", len=0.62, x=1,
                      xanchor="right", currentvalue=dict(prefix="message size: "), pad=dict(t=0, b=0))])
    return fig
