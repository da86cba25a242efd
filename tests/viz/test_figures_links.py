"""Figures of link bandwidth: compute vs links, NVLink generations, per direction vs both (gpucomm.viz.figures.links)."""
from __future__ import annotations

import json

import pytest

plotly = pytest.importorskip("plotly")

from gpucomm.model.cost import effective_bw_bytes_per_s  # noqa: E402
from gpucomm.model.hardware import LINKS  # noqa: E402
from gpucomm.model.scaling import GENERATIONS, generation_growth, tp_flops_per_wire_byte  # noqa: E402
from gpucomm.viz.figures.links import compute_vs_links_figure, link_direction_figure, nvlink_generations_figure  # noqa: E402


def _size_kb(fig) -> float:
    return len(fig.to_json()) / 1024


def _small(fig):
    assert len(fig.to_json()) < 300_000


def test_compute_vs_links_figure_views():
    fig = compute_vs_links_figure()
    assert [t.y for t in fig.data[:3]] == [tuple(g.compute_flops_per_s / 1e12 for g in GENERATIONS),
                                           tuple(g.nvlink_bw_bytes_per_s / 1e9 for g in GENERATIONS),
                                           tuple(g.pcie_bw_bytes_per_s / 1e9 for g in GENERATIONS)]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["absolute", "growth since P100 (2016)", "FLOP per byte of link"]
    growth = buttons[1].args[0]["y"]
    assert [series[0] for series in growth[:3]] == [1.0, 1.0, 1.0]
    assert growth[0][-1] == pytest.approx(generation_growth()["compute"])
    balance = buttons[2].args[0]
    assert balance["visible"] == [False, False, False, True, True, True, True]
    assert balance["y"][5][0] == pytest.approx(tp_flops_per_wire_byte("llama-3-70b", tp_size=2))
    assert fig.layout.yaxis.type == "log"
    assert len(buttons[0].args[0]["y"]) == len(fig.data)
    assert _size_kb(fig) < 300


def test_nvlink_generations_figure_views():
    fig = nvlink_generations_figure()
    assert list(fig.data[0].y) == [g.nvlink_bw_bytes_per_s / 1e9 for g in GENERATIONS]
    views = {b.label: b.args[0] for b in fig.layout.updatemenus[0].buttons}
    assert views["per link, per direction"]["y"][0] == [20, 25, 25, 25, 50]
    assert views["per link, per direction"]["visible"] == [True, False]
    assert views["per GPU, both directions"]["y"][0] == [160, 300, 600, 900, 1800]
    json.loads(fig.to_json())


def test_link_direction_figure_buttons():
    fig = link_direction_figure()
    _small(fig)
    b = fig.layout.updatemenus[0].buttons
    per_dir, bidir, busbw = (btn.args[0]["y"][0] for btn in b)
    assert bidir == pytest.approx([link.bidir_marketing_bytes_per_s / 1e9 for link in LINKS.values()])  # datasheets
    assert bidir[:4] == pytest.approx([32, 64, 128, 256])  # PCI-SIG: PCIe 3.0-6.0 x16 at the raw bit rate, both directions
    assert bidir[4:] == pytest.approx([2 * v for v in per_dir[4:]])  # NVIDIA: twice the per-direction NVLink rate
    assert busbw == pytest.approx([effective_bw_bytes_per_s(k) / 1e9 for k in LINKS])


def test_link_direction_figure_buttons_fit_one_row():
    """The three buttons fit the book's desktop figure (688 px, the plot starting 80 px in; plotly draws about 7 px
    per character plus 20 px of padding each), and the eleven tick labels are turned so they do not run together."""
    fig = link_direction_figure()
    labels = [btn.label for btn in fig.layout.updatemenus[0].buttons]
    assert sum(20 + 7 * len(label) for label in labels) < 688 - 80 - 20, labels
    assert fig.layout.xaxis.tickangle not in (None, 0)
    titles = [btn.args[1]["title.text"] for btn in fig.layout.updatemenus[0].buttons]
    assert titles[0] == fig.layout.title.text and "(nominal)" in titles[0]
