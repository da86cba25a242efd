"""Figures of collective costs: every algorithm's alpha and beta parts, all_reduce over PCIe (gpucomm.viz.figures.collectives)."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError

plotly = pytest.importorskip("plotly")

from gpucomm.model.collectives import COLLECTIVES  # noqa: E402
from gpucomm.model.cost import collective_cost  # noqa: E402
from gpucomm.viz.figures.collectives import SHOWN_ALGORITHMS, algorithms_figure, pcie_allreduce_figure  # noqa: E402


def _size_kb(fig) -> float:
    return len(fig.to_json()) / 1024


def test_algorithms_figure_dropdown_and_slider():
    fig = algorithms_figure("nvlink4", gpu_counts=(2, 4, 8), initial_gpus=8)
    assert len(fig.data) == 3 * len(SHOWN_ALGORITHMS) + 1
    assert len(fig.to_json()) < 300_000
    menu = fig.layout.updatemenus[0]
    assert [b.label for b in menu.buttons] == list(COLLECTIVES)
    ag = menu.buttons[COLLECTIVES.index("all_gather")]
    slider = ag.args[1]["sliders"][0]
    assert [s["label"] for s in slider["steps"]] == ["2", "4", "8"]
    ys = slider["steps"][1]["args"][0]["y"]  # all_gather on 4 GPUs
    sizes = list(fig.data[0].x)
    ring = collective_cost("all_gather", sizes[-1], num_ranks=4, fabric="nvlink4", algorithm="ring")
    assert ys[0][-1] == pytest.approx(ring.time_s * 1e6, rel=1e-3)
    assert ys[1][-1] == pytest.approx(ring.latency_s * 1e6, rel=1e-3)
    assert ys[2][-1] == pytest.approx(ring.transfer_s * 1e6, rel=1e-3)
    tree = SHOWN_ALGORITHMS.index("tree")
    assert all(v is None for v in ys[3 * tree])  # tree does not implement all_gather
    auto = collective_cost("all_gather", sizes[0], num_ranks=4, fabric="nvlink4")
    assert slider["steps"][1]["args"][0]["customdata"][-1][0] == f"{auto.algorithm}/{auto.protocol}"
    with pytest.raises(GpucommError, match="initial GPU count"):
        algorithms_figure(gpu_counts=(2, 4), initial_gpus=8)


def test_algorithms_figure_rhd_missing_off_powers_of_two():
    fig = algorithms_figure("nvlink4", collectives=("all_reduce",), gpu_counts=(6,), initial_gpus=6)
    rhd = SHOWN_ALGORITHMS.index("rhd")
    assert all(v is None for v in fig.data[3 * rhd].y)
    assert all(v is not None and v > 0 for v in fig.data[0].y)


def test_pcie_allreduce_figure_has_a_gpu_slider_and_dotted_staged_paths():
    fig = pcie_allreduce_figure()
    assert len(fig.data) == 16 and len(fig.layout.sliders[0].steps) == 3
    dotted = [t.name for t in fig.data if t.line.dash == "dot"]
    assert dotted and all("no P2P" in name for name in dotted)
    assert fig.layout.xaxis.tickvals[0] > 8  # the overlapping 8 B tick is gone
    assert _size_kb(fig) < 300
    with pytest.raises(GpucommError):
        pcie_allreduce_figure(initial_gpus=16)


def test_explorer_leaves_out_a_link_at_gpu_counts_its_nvlink_domain_cannot_hold():
    from gpucomm.viz.calculators.collective import DEFAULT_FABRICS, cost_explorer_figure

    fig = cost_explorer_figure("all_reduce", initial_gpus=4)
    step = next(s for s in fig.layout.sliders[0].steps if s.label == "32")
    ys = step.args[0]["y"]
    for i, fabric in enumerate(DEFAULT_FABRICS):
        time_us = ys[2 * i]
        if fabric.link.key == "nvlink3":  # 16 GPUs at most in one NVLink 3 switch domain
            assert all(y is None for y in time_us)
        else:
            assert all(y > 0 for y in time_us), fabric.label
