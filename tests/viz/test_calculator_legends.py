"""The live calculators' figures as the book's phone layout reads them: every legend entry fits one line.

On a phone (390 px screen, a figure 358 px wide) the book's layout script (``book/_ext/layout_static/gpucomm_layout.js``,
``compact``) wraps a legend entry longer than ``(width - 60 px) / (0.56 x 12 px)`` characters, 44, by a restyle of the
trace names: a full redraw of the figure as the page opens (90 to 160 ms of the main thread, measured on the TP page,
static-book issue 26). The calculators name their traces to fit.
"""

from __future__ import annotations

import re

import pytest

from gpucomm.viz.calculators.live import calculators

PHONE_FIGURE_PX = 358  # a figure's width in the book's column at 390 px (Chromium, measured 2026-12-06)
PHONE_LEGEND_CHARS = int((PHONE_FIGURE_PX - 60) / (0.56 * 12))  # the layout script's wrap: 44


def _visible(name: str) -> str:
    return re.sub(r"<[^>]+>", "", name or "")


def _too_long(fig) -> list[str]:
    return [t.name for t in fig.data if t.showlegend is not False and len(_visible(t.name)) > PHONE_LEGEND_CHARS]


@pytest.mark.parametrize("name", [n for n, c in calculators().items() if c.figure is not None])
def test_live_figure_legend_entries_fit_a_phone_line(name):
    calc = calculators()[name]
    assert PHONE_LEGEND_CHARS == 44
    assert _too_long(calc.figure(calc.inputs())) == []


def test_tp_explorer_legend_entries_fit_a_phone_line():
    from gpucomm.viz.calculators.tp_inference import tp_explorer_figure

    assert _too_long(tp_explorer_figure()) == []
