"""Layout helpers shared by the book's figure modules: colours, titles, control rows, rounding.

Private to :mod:`gpucomm.viz.figures`: each figure module draws, these helpers only place titles and
controls the same way everywhere (plotly's updatemenus and sliders have no container coordinates, so
their positions are computed from the figure's pixel margins).
"""

from __future__ import annotations

import math

from gpucomm import GpucommError

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
"""plotly's default colours, blue and red first: one per series of the NVSwitch, collectives and measuring figures."""

LINE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
"""The same colours with cyan sixth: one per series of the TP, training, scale-out and hardware-choice figures."""

COMPUTE_COLOR, NVLINK_COLOR, PCIE_COLOR = "#1f77b4", "#2ca02c", "#d62728"
"""Colours of compute, NVLink and PCIe wherever the three appear side by side."""

TOP_MARGIN_PX = 100
"""Top margin of a figure with :func:`top_title` and a :func:`menu` row: title on the first row, buttons on the second."""


def color(i: int) -> str:
    """The ``i``-th colour of :data:`LINE_COLORS`, cycling."""
    return LINE_COLORS[i % len(LINE_COLORS)]


def sig(values, digits: int = 4) -> list:
    """Round to ``digits`` significant digits (smaller figure JSON); None stays None, non-finite becomes None."""
    out = []
    for v in values:
        if v is None or v == 0 or not math.isfinite(v):
            out.append(v if v is None or v == 0 else None)
        else:
            out.append(float(f"{v:.{digits}g}"))
    return out


def y_from_top(px: float, *, height: int, top: int, bottom: int) -> float:
    """Paper y of a point ``px`` pixels below the figure's top edge (updatemenus have no container coordinates)."""
    return 1 + (top - px) / (height - top - bottom)


def corner_title(text: str) -> dict:
    """A title pinned to the top-left corner, clear of the controls placed under it."""
    return dict(text=text, x=0.01, xanchor="left", y=0.985, yanchor="top")


def top_title(text: str) -> dict:
    """Title pinned to the top of the figure, so the button row below it never covers it."""
    return dict(text=text, x=0.0, xanchor="left", xref="paper", y=0.99, yref="container", yanchor="top",
                font=dict(size=16))


def menu(kind: str, buttons: list[dict]) -> dict:
    """A button row (``kind="buttons"``) or dropdown just above the plot area, under the title."""
    return dict(type=kind, direction="right" if kind == "buttons" else "down", buttons=buttons, active=0,
                x=0.0, xanchor="left", y=1.02, yanchor="bottom", showactive=True, pad=dict(t=0, b=0))


def check_initial(name: str, initial, options) -> None:
    """Raise unless a control's starting value ``initial`` is one of its ``options``."""
    if initial not in options:
        raise GpucommError(f"initial {name} {initial!r} is not valid: expected one of {tuple(options)}")
