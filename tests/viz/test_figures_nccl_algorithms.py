"""NCCL's tuner figures: every (algorithm, protocol) with the pick marked, small messages (gpucomm.viz.figures.nccl_algorithms)."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError

plotly = pytest.importorskip("plotly")

from gpucomm.model.cost import collective_cost  # noqa: E402
from gpucomm.model.fabric import system_fabric  # noqa: E402
from gpucomm.viz.figures.nccl_algorithms import (  # noqa: E402
    ALGORITHM_LABELS,
    PROTOCOL_DASH,
    SMALL_MESSAGE_SERIES,
    small_message_figure,
    tuner_choice_figure,
)


def _pairs(fig) -> set[str]:
    return {t.name for t in fig.data if t.mode == "lines"}


def test_tuner_figure_one_line_per_pair_nccl_weighs_and_the_pick_on_the_lowest():
    fabric = system_fabric("dgx_h100")
    fig = tuner_choice_figure(fabric, 8, min_bytes=1024, max_bytes=2**30)
    sizes = list(fig.data[0].x)
    expected = {f"{ALGORITHM_LABELS[a]}/{p}" for a, p, _ in
                collective_cost("all_reduce", sizes[-1], num_ranks=8, fabric=fabric).alternatives}
    assert _pairs(fig) == expected and "NVLS/Simple" in expected and "Ring/LL" in expected
    for t in fig.data[:-1]:  # the dash says the protocol
        assert t.line.dash == PROTOCOL_DASH[t.name.split("/")[1]]
    pick = fig.data[-1]
    assert pick.name == "NCCL's pick" and pick.mode == "markers"
    for i, size in enumerate(sizes):
        c = collective_cost("all_reduce", size, num_ranks=8, fabric=fabric)
        assert pick.customdata[i] == f"{ALGORITHM_LABELS[c.nccl_algorithm]}/{c.nccl_protocol}"
        assert pick.y[i] == pytest.approx(c.nccl_time_s * 1e6, rel=1e-3)
        lowest = min(t.y[i] for t in fig.data[:-1] if t.y[i] is not None)
        assert pick.y[i] == pytest.approx(lowest, rel=1e-3)  # the pick is the lowest estimate
    assert pick.customdata[0] == "Ring/LL" and pick.customdata[-1] == "NVLS/Simple"
    assert fig.layout.yaxis.title.text == "NCCL's estimated time (us)" and fig.layout.xaxis.type == "log"
    assert fig.layout.xaxis.ticktext[0] == "1 KiB"


def test_tuner_figure_busbw_button_and_units():
    fig = tuner_choice_figure("nvlink4", 8, min_bytes=2**20, max_bytes=2**30)
    time_button, bw_button = fig.layout.updatemenus[0].buttons
    assert time_button.args[1]["yaxis.title.text"].endswith("(us)")
    assert bw_button.args[1]["yaxis.title.text"].endswith("(GB/s)")
    size = fig.data[-1].x[-1]
    c = collective_cost("all_reduce", size, num_ranks=8, fabric="nvlink4")
    assert bw_button.args[0]["y"][-1][-1] == pytest.approx(size / c.nccl_time_s * 2 * 7 / 8 / 1e9, rel=1e-3)


def test_tuner_figure_across_nodes_has_nvls_tree_and_the_release_gates_pairs():
    two_nodes = tuner_choice_figure(system_fabric("dgx_h100", num_nodes=2, network="ib_ndr"), 16)
    assert "NVLSTree/Simple" in _pairs(two_nodes) and "NVLS/Simple" not in _pairs(two_nodes)
    old = tuner_choice_figure("nvlink4", 8, nccl_version="2.16.5")  # before NVLS (2.17)
    assert not any(name.startswith("NVLS") for name in _pairs(old))
    assert "2.16.5" in old.layout.title.text


def test_tuner_figure_rejects_collectives_outside_the_tuner():
    with pytest.raises(GpucommError, match="not in NCCL's tuner"):
        tuner_choice_figure("nvlink4", 8, collective="all_to_all")
    with pytest.raises(GpucommError):
        tuner_choice_figure("nvlink4", 8, min_bytes=2**20, max_bytes=1024)


def test_small_message_figure_lines_pick_and_split():
    fig = small_message_figure("nvlink4", 8, min_bytes=1024, max_bytes=2**20)
    names = [t.name for t in fig.data]
    assert names[:len(SMALL_MESSAGE_SERIES)] == [s[0] for s in SMALL_MESSAGE_SERIES]
    eager, graph = fig.data[0], fig.data[1]
    assert all(g < e for g, e in zip(graph.y, eager.y))  # a CUDA graph saves the launch
    c = collective_cost("all_reduce", 1024, num_ranks=8, fabric="nvlink4")
    pick = fig.data[len(SMALL_MESSAGE_SERIES)]
    assert pick.customdata[0] == f"{ALGORITHM_LABELS[c.algorithm]}/{c.protocol}"
    bars = {t.name: t for t in fig.data if t.type == "bar"}
    assert set(bars) == {"launch", "latency", "transfer"}
    total = sum(bars[k].y[0] for k in bars)
    assert total == pytest.approx(c.time_s * 1e6, rel=1e-3)
    assert fig.layout.yaxis.title.text == "time (us)" and fig.layout.barmode == "stack"
    with pytest.raises(GpucommError):
        small_message_figure("pcie4", 8, min_bytes=4096, max_bytes=1024)
