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


BOOK_FIGURE_WIDTH_PX = 760
"""Width of a figure in the book's desktop column (1280 px screen), for estimating legend rows."""

LEGEND_ROW_PX = 22
"""Height of one row of a horizontal legend (font 12 plus padding)."""

SLIDER_PX = 90
"""Height of a slider with its current-value label, rail and tick labels."""


def legend_rows(labels, width_px: int = BOOK_FIGURE_WIDTH_PX) -> int:
    """Rows a horizontal legend of ``labels`` takes at ``width_px`` (7 px per character, 40 px per symbol).

    >>> legend_rows(["a" * 20] * 4), legend_rows(["a" * 20] * 5)  # 180 px each: four to a 760 px row
    (1, 2)
    """
    rows, used = 1, 0
    for label in labels:
        w = 40 + 7 * len(str(label))
        if used and used + w > width_px:
            rows, used = rows + 1, 0
        used += w
    return rows


def legend_then_slider(labels, *, height: int, top: int, axis_px: int = 60, row_px: int = LEGEND_ROW_PX,
                       width_px: int = BOOK_FIGURE_WIDTH_PX) -> dict:
    """Layout keys that put the legend under the x axis and the slider under the legend, never on it.

    Plotly places both in paper coordinates, which scale with the plot area; the positions here are
    computed in pixels from the legend's rows (:func:`legend_rows`) so the slider's rail clears it.

    Parameters
    ----------
    labels : sequence of str
        The legend's entries.
    height, top : int
        Figure height and top margin, pixels.
    axis_px : int
        Room under the plot area for the x tick labels and title, pixels.
    row_px, width_px : int
        Height of one legend row and the width the legend wraps at, pixels (:func:`legend_rows`): a figure whose
        legend was measured in the book passes what was measured.

    Returns
    -------
    dict
        ``margin_b`` (bottom margin, pixels), ``legend`` (dict) and ``slider_y`` (paper y, anchored at
        the slider's top).
    """
    legend_px = legend_rows(labels, width_px) * row_px
    bottom = axis_px + legend_px + SLIDER_PX + 10
    plot_px = height - top - bottom
    return dict(margin_b=bottom, legend=dict(orientation="h", x=0, xanchor="left", y=-axis_px / plot_px,
                                               yanchor="top"),
                slider_y=-(axis_px + legend_px + 5) / plot_px)


def full_number(value: float) -> str:
    """A tick value written in full, as the book's layout script writes the 1-2-5 ticks it gives a log axis
    (``fullNumber`` in ``book/_ext/layout_static/gpucomm_layout.js``): k, M, G from ten of each up, 3 digits at most.

    >>> [full_number(v) for v in (0.05, 2, 500, 5000, 20000, 2e7, 5e10)]
    ['0.05', '2', '500', '5000', '20k', '20M', '50G']
    """
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= 10 * scale:
            return f"{float(f'{value / scale:.3g}'):g}{suffix}"
    return f"{float(f'{value:.3g}'):f}".rstrip("0").rstrip(".")


def log_ticks_125(lo_exp: int, hi_exp: int) -> dict:
    """Axis keys for a log axis labelled at 1, 2 and 5 of every decade from 10**lo_exp to 5 * 10**hi_exp, each written
    in full (:func:`full_number`): what the book's layout script would give an axis plotly labels with one full number
    and single digits, given by the figure itself so that the script has nothing to redraw.

    >>> log_ticks_125(0, 1)["ticktext"]
    ['1', '2', '5', '10', '20', '50']
    """
    values = [m * 10.0 ** k for k in range(lo_exp, hi_exp + 1) for m in (1, 2, 5)]
    return dict(tickmode="array", tickvals=values, ticktext=[full_number(v) for v in values])

