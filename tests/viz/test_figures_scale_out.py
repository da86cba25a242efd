"""Figure of all_reduce across nodes (gpucomm.viz.figures.scale_out)."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError

plotly = pytest.importorskip("plotly")

from gpucomm.model.cost import collective_cost  # noqa: E402
from gpucomm.model.fabric import make_fabric  # noqa: E402
from gpucomm.viz.figures.scale_out import scale_out_busbw_figure  # noqa: E402


def _small(fig):
    assert len(fig.to_json()) < 300_000


def step_y(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["y"]


def step_text(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["text"]


def test_scale_out_figure_matches_hierarchical_cost():
    fabrics = (make_fabric("nvlink4", num_nodes=2, network="ib_ndr"),
               make_fabric("nvlink4", num_nodes=2, network="eth_200g", nics_per_node=8))
    fig = scale_out_busbw_figure(fabrics, node_counts=(1, 2, 16), initial_nodes=2,
                                 measured=[("C08", [2**30, 8 * 2**30], [297.86e9, 338.82e9])])
    _small(fig)
    x = list(fig.data[0].x)
    cost = collective_cost("all_reduce", x[-1], num_ranks=128, fabric=fabrics[0].replace(num_nodes=16))
    assert step_y(fig, 2)[0][-1] == pytest.approx(cost.busbw_bytes_per_s / 1e9)
    one = step_y(fig, 0)
    assert one[0] == one[1]  # a single node does not use the network
    assert list(fig.data[-1].y) == pytest.approx([297.86, 338.82])
    assert [t.name for t in fig.data[:2]] == ["InfiniBand NDR 4x (400 Gb/s), 1 NIC per GPU",
                                             "200 Gigabit Ethernet (RoCE), 8 NICs per node"]
    with pytest.raises(GpucommError, match="has no network"):
        scale_out_busbw_figure((make_fabric("nvlink4"),))
