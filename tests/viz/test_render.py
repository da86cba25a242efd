"""The book renderer: one mimetype per figure, chosen by where the kernel runs; committed notebooks hold each once."""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio

from gpucomm.viz.figures.render import BOOK_BUILD_ENV, BOOK_RENDERER, use_book_renderer

ROOT = Path(__file__).parents[2]
PLOTLY_JSON = "application/vnd.plotly.v1+json"


def test_a_book_build_renders_html_and_anywhere_else_plotlys_mimetype(monkeypatch):
    figure = go.Figure(go.Bar(y=[1, 2]))
    monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    use_book_renderer()
    assert pio.renderers.default == BOOK_RENDERER
    assert set(pio.renderers._build_mime_bundle(figure.to_dict())) == {"text/html"}
    monkeypatch.delenv(BOOK_BUILD_ENV)
    use_book_renderer()
    assert pio.renderers.default == "plotly_mimetype"
    assert set(pio.renderers._build_mime_bundle(figure.to_dict())) == {PLOTLY_JSON}


def test_committed_notebooks_hold_each_figure_once_and_one_megabyte_in_all():
    paths = sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("labs/*.ipynb")])
    assert len(paths) >= 10
    twice = []
    for path in paths:
        for number, cell in enumerate(json.loads(path.read_text())["cells"]):
            for output in cell.get("outputs", []):
                if {"text/html", PLOTLY_JSON} <= set(output.get("data", {})):
                    twice.append(f"{path.relative_to(ROOT)} cell {number}")
    assert not twice, f"figures stored twice (re-run scripts/execute_notebooks.py): {twice}"
    assert sum(p.stat().st_size for p in paths) <= 1_000_000
