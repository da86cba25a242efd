"""Interconnect generations against GPU compute: PCIe and NVLink bandwidth per GPU over the years vs FLOP/s.

Everything is read from the hardware catalog: :data:`gpucomm.model.hardware.PCIE_GENS`
(:func:`~gpucomm.model.hardware.pcie_bw_bytes_per_s`), the NVLink generations of
:data:`gpucomm.model.hardware.LINKS`, the Ethernet ports of :data:`gpucomm.model.hardware.NETWORKS` that have a
year, and the dense tensor FLOP/s of :data:`gpucomm.model.hardware.GPUS`. Bandwidth is per direction; the
"both directions added" view exists only to show where vendors' larger numbers come from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpucomm import GpucommError
from gpucomm.viz.calculators.inputs import FigureUpdate, apply_update, check_inputs, param, step_args

if TYPE_CHECKING:  # plotly is imported where a figure is built: the book's live mode runs the updates without it
    import plotly.graph_objects as go

__all__ = ["GenerationsInputs", "generation_series", "flops_per_link_byte", "generations_figure",
           "generations_update", "generations_explorer_figure"]


def _lane_choices() -> list[tuple[str, int]]:
    from gpucomm.model.hardware.pcie import LANE_COUNTS

    return [(f"x{n}", n) for n in LANE_COUNTS]


_FLOPS_FIELDS = {"fp16": "dense_fp16_flops_per_s", "bf16": "dense_bf16_flops_per_s", "fp8": "dense_fp8_flops_per_s"}


def _flops_choices() -> list[tuple[str, str]]:
    return [("dense FP16", "fp16"), ("dense BF16", "bf16"), ("dense FP8", "fp8")]


@dataclass(frozen=True)
class GenerationsInputs:
    """Inputs of the generations explorer."""

    pcie_lanes: int = param(16, label="PCIe lanes", choices=_lane_choices,
                            help="Width of the PCIe link drawn (a GPU slot is x16).")
    flops_dtype: str = param("fp16", label="GPU FLOP/s", choices=_flops_choices,
                             help="Which dense tensor-core rate of the catalog to plot (no 2:4 sparsity).")
    both_directions: bool = param(False, label="both directions added",
                                  help="Off: bandwidth per direction (what a transfer gets). On: both directions "
                                       "added, as datasheets quote it; never use it in a formula.")


def _flagship_gpus() -> list:
    """Per architecture, the catalog GPU with NVLink on the board (SXM, superchip: no bridges) and the most sourced
    FLOP/s, by year: one point per generation (the cut-down export parts, H800 and H20, would draw a trend backwards)."""
    from gpucomm.model.hardware import GPUS

    def flops(g):
        return g.dense_fp16_flops_per_s or g.dense_bf16_flops_per_s or 0.0

    best = {}
    for g in GPUS.values():
        if g.arch_year and g.nvlink_bw_bytes_per_s and not g.nvlink_bridge and flops(g):
            if g.architecture not in best or flops(g) > flops(best[g.architecture]):
                best[g.architecture] = g
    return sorted(best.values(), key=lambda g: (g.arch_year, flops(g)))


def flops_per_link_byte(gpu: str, *, dtype: str = "fp16") -> float | None:
    """Dense FLOP a GPU can do in the time its NVLink moves one byte (per direction), or None.

    ``flops_per_s / nvlink_bw_bytes_per_s``: the arithmetic intensity a tensor-parallel kernel
    needs per byte it communicates for the link not to be the bottleneck (roofline, Williams et
    al., CACM 52(4), 2009, with the link in place of memory).

    Parameters
    ----------
    gpu : str
        Catalog key.
    dtype : {"fp16", "bf16", "fp8"}
        Which dense tensor-core rate.

    Returns
    -------
    float or None
        FLOP per byte; None if the catalog has no rate for that dtype or the GPU has no NVLink.

    Raises
    ------
    GpucommError
        Unknown GPU or dtype.

    Examples
    --------
    >>> round(flops_per_link_byte("h100_sxm5"))
    2199
    """
    from gpucomm.model.hardware import get_gpu

    if dtype not in _FLOPS_FIELDS:
        raise GpucommError(f"dtype {dtype!r} is not valid: expected one of {', '.join(_FLOPS_FIELDS)}")
    spec = get_gpu(gpu)
    flops = getattr(spec, _FLOPS_FIELDS[dtype])
    if not flops or not spec.nvlink_bw_bytes_per_s:
        return None
    return flops / spec.nvlink_bw_bytes_per_s


def generation_series(inputs: GenerationsInputs) -> dict[str, dict[str, list]]:
    """The catalog as series of (year, value, label): PCIe, NVLink, Ethernet in GB/s; FLOP/s; FLOP per NVLink byte.

    Returns
    -------
    dict
        ``pcie``, ``nvlink``, ``ethernet`` (GB/s, per direction or both added; PCIe both added as PCI-SIG
        quotes it, at the raw bit rate from PCIe 3.0 on), ``flops`` (TFLOP/s, dense),
        ``intensity`` (FLOP per NVLink byte per direction); each ``{"x": years, "y": values, "text": labels}``.
    """
    from gpucomm.model.hardware import LINKS, NETWORKS, PCIE_GENS, pcie_bw_bytes_per_s

    inputs = check_inputs(inputs)
    k = 2 if inputs.both_directions else 1
    gens = sorted(PCIE_GENS.values(), key=lambda g: g.gen)
    nvlinks = sorted((link for link in LINKS.values() if link.kind == "nvlink"), key=lambda link: link.year)
    ethernet = sorted((n for n in NETWORKS.values() if n.year is not None), key=lambda n: (n.year, n.bw_bytes_per_s))
    gpus = _flagship_gpus()
    field = _FLOPS_FIELDS[inputs.flops_dtype]
    return {
        # both directions of PCIe as PCI-SIG prints them: from 3.0 on at the raw bit rate, before the line code
        "pcie": {"x": [g.year for g in gens],
                 "y": [(g.x16_bidir_marketing_bytes_per_s * inputs.pcie_lanes / 16 if inputs.both_directions
                        else pcie_bw_bytes_per_s(g.gen, inputs.pcie_lanes)) / 1e9 for g in gens],
                 "text": [f"{g.name} x{inputs.pcie_lanes}" for g in gens]},
        "nvlink": {"x": [link.year for link in nvlinks], "y": [k * link.bw_bytes_per_s / 1e9 for link in nvlinks],
                   "text": [link.name for link in nvlinks]},
        "ethernet": {"x": [n.year for n in ethernet], "y": [k * n.bw_bytes_per_s / 1e9 for n in ethernet],
                     "text": [n.name for n in ethernet]},
        "flops": {"x": [g.arch_year for g in gpus],
                  "y": [(getattr(g, field) / 1e12 if getattr(g, field) else None) for g in gpus],
                  "text": [g.name for g in gpus]},
        "intensity": {"x": [g.arch_year for g in gpus],
                      "y": [flops_per_link_byte(g.key, dtype=inputs.flops_dtype) for g in gpus],
                      "text": [g.name for g in gpus]},
    }


_BW = (("pcie", "PCIe (per slot)", "#2ca02c"), ("nvlink", "NVLink (per GPU)", "#1f77b4"),
       ("ethernet", "Ethernet port (per NIC)", "#ff7f0e"))
_ORDER = ("pcie", "nvlink", "ethernet", "flops", "intensity")


def generations_figure(inputs: GenerationsInputs | None = None) -> go.Figure:
    """Three panels over the years: link bandwidth (log), GPU dense FLOP/s (log), FLOP per NVLink byte.

    Traces, in order: PCIe, NVLink, Ethernet (panel 1), FLOP/s (panel 2), FLOP per NVLink byte (panel 3).
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    inputs = check_inputs(inputs or GenerationsInputs())
    fig = make_subplots(rows=2, cols=2, specs=[[{"colspan": 2}, None], [{}, {}]], horizontal_spacing=0.16,
                        vertical_spacing=0.16,
                        subplot_titles=("link bandwidth per GPU", "GPU dense FLOP/s", "FLOP per byte of NVLink"))
    for _key, name, color in _BW:
        fig.add_trace(go.Scatter(x=[], y=[], name=name, mode="lines+markers", line=dict(color=color, shape="hv"),
                                 hovertemplate="%{text} (%{x}): %{y:.4g} GB/s<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[], y=[], name="GPU (SXM / superchip)", mode="markers+lines", line=dict(color="#444"),
                             hovertemplate="%{text} (%{x}): %{y:.4g} TFLOP/s<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Scatter(x=[], y=[], name="FLOP per NVLink byte", mode="markers+lines", line=dict(color="#9467bd"),
                             hovertemplate="%{text} (%{x}): %{y:.4g} FLOP per byte<extra></extra>"), row=2, col=2)
    fig.update_xaxes(title_text="year", dtick=2, row=1, col=1)
    fig.update_xaxes(title_text="year", dtick=2, row=2)
    fig.update_yaxes(type="log", dtick=1, title_text="GB/s", row=1, col=1)
    fig.update_yaxes(type="log", dtick="D2", title_text="TFLOP/s", row=2, col=1)
    fig.update_yaxes(title_text="FLOP per NVLink byte", rangemode="tozero", row=2, col=2)
    fig.update_layout(template="plotly_white", height=760, margin=dict(t=110, b=60),
                      title=dict(y=0.98, yanchor="top"), legend=dict(orientation="h", y=-0.12, yanchor="top"))
    apply_update(fig, generations_update(inputs))
    return fig


def _growth(xs: list, ys: list) -> str:
    points = [(x, y) for x, y in zip(xs, ys) if y]
    if len(points) < 2:
        return "n/a"
    (x0, y0), (x1, y1) = points[0], points[-1]
    ratio = y1 / y0
    return f"{ratio:.1f}x from {x0} to {x1}" if ratio < 10 else f"{ratio:.0f}x from {x0} to {x1}"


def generations_update(inputs: GenerationsInputs) -> FigureUpdate:
    """The five traces of :func:`generations_figure` for ``inputs``, and a summary of the growth factors."""
    s = generation_series(inputs)
    direction = "both directions added" if inputs.both_directions else "per direction"
    summary = (f"PCIe x{inputs.pcie_lanes}: {_growth(s['pcie']['x'], s['pcie']['y'])}; "
               f"NVLink per GPU: {_growth(s['nvlink']['x'], s['nvlink']['y'])}; "
               f"GPU {inputs.flops_dtype} FLOP/s: {_growth(s['flops']['x'], s['flops']['y'])}; "
               f"FLOP per NVLink byte: {_growth(s['intensity']['x'], s['intensity']['y'])} ({direction})")
    return FigureUpdate({key: [s[k][key] for k in _ORDER] for key in ("x", "y", "text")}, tuple(range(5)),
                        {"title.text": f"Interconnects ({direction}) vs GPU {inputs.flops_dtype} compute (catalog)"},
                        summary)


def generations_explorer_figure(inputs: GenerationsInputs | None = None) -> go.Figure:
    """Static explorer: buttons per direction / both directions (bandwidth traces) and a dropdown
    over the FLOP/s dtype (FLOP/s and FLOP-per-byte traces). They touch different traces, so they compose.
    """
    inputs = check_inputs(inputs or GenerationsInputs())
    fig = generations_figure(inputs)
    fig.update_layout(title_text="Interconnects vs GPU compute (catalog)")

    def part(update: FigureUpdate, indices: tuple[int, ...]) -> list:
        data = {key: [values[i] for i in indices] for key, values in update.data.items()}
        return step_args(FigureUpdate(data, indices, {}))

    direction_buttons = [dict(method="update", label=label, args=part(generations_update(replace(inputs, both_directions=b)),
                                                                       (0, 1, 2)))
                         for label, b in (("per direction", False), ("both directions added (datasheets)", True))]
    dtype_buttons = [dict(method="update", label=label, args=part(generations_update(replace(inputs, flops_dtype=d)), (3, 4)))
                     for label, d in _flops_choices()]
    fig.update_layout(updatemenus=[
        dict(type="buttons", direction="right", buttons=direction_buttons, active=int(inputs.both_directions),
             x=0, xanchor="left", y=1.07, yanchor="bottom"),
        dict(type="dropdown", buttons=dtype_buttons, active=[d for _, d in _flops_choices()].index(inputs.flops_dtype),
             x=1, xanchor="right", y=1.07, yanchor="bottom")],
        margin=dict(t=150))
    return fig
