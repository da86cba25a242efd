"""Figures of the MoE and debugging chapters (gpucomm.viz.figures.expert_parallel, gpucomm.viz.figures.debugging)."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError

plotly = pytest.importorskip("plotly")

from gpucomm.model.expert_parallel import moe_layer_all_to_all  # noqa: E402
from gpucomm.model.fabric import system_fabric  # noqa: E402
from gpucomm.viz.figures.debugging import connection_transports_figure, transport_color  # noqa: E402
from gpucomm.viz.figures.expert_parallel import moe_all_to_all_figure  # noqa: E402


def test_moe_figure_replays_the_model_per_ep_size():
    fig = moe_all_to_all_figure(("deepseek-v3", "mixtral-8x7b"), ep_sizes=(8, 16), initial_ep=16,
                                tokens_per_gpu=(128, 4096))
    assert len(fig.to_json()) < 300_000
    assert len(fig.data) == 2 * 4  # two models x (one node, two networks, NVL72)
    assert [t.visible for t in fig.data] == [True] * 4 + [False] * 4
    ep16 = fig.layout.sliders[0].steps[1].args[0]["y"]
    want = moe_layer_all_to_all("deepseek-v3", 4096, ep_size=16,
                                fabric=system_fabric("dgx_h100", num_nodes=2, network="ib_ndr")).time_s * 1e6
    assert ep16[1][-1] == pytest.approx(want, rel=1e-3)
    assert ep16[0] == [None, None]  # 16 GPUs do not fit one 8-GPU node
    ep8 = fig.layout.sliders[0].steps[0].args[0]["y"]
    assert ep8[0][0] is not None and ep8[1] == [None, None]  # EP 8 stays inside the node
    with pytest.raises(GpucommError, match="EP size"):
        moe_all_to_all_figure(ep_sizes=(8, 16), initial_ep=32)
    with pytest.raises(GpucommError, match="MoE model"):
        moe_all_to_all_figure(("gpt-moe",))


def test_transport_figure_one_trace_per_log():
    logs = {"a": {"P2P/IPC": 6, "NET/IB/GDRDMA": 2}, "b": {"SHM": 9}}
    fig = connection_transports_figure(logs, notes={"a": "nothing flagged"}, initial="b")
    assert [t.visible for t in fig.data] == [False, True]
    assert list(fig.data[0].y) == [6, 2]
    assert "nothing flagged" in fig.layout.updatemenus[0].buttons[0].args[1]["title.text"]
    assert transport_color("P2P/CUMEM") != transport_color("SHM") != transport_color("NET/Socket")
    assert transport_color("NET/IB/GDRDMA") != transport_color("NET/IB")
    with pytest.raises(GpucommError, match="no log"):
        connection_transports_figure({})
    with pytest.raises(GpucommError, match="without connection"):
        connection_transports_figure({"a": {}})
    with pytest.raises(GpucommError, match="initial log"):
        connection_transports_figure(logs, initial="c")
