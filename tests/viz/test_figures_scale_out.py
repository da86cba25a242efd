"""Figure of all_reduce across nodes (gpucomm.viz.figures.scale_out)."""
from __future__ import annotations

import pytest

plotly = pytest.importorskip("plotly")

from gpucomm.model.cost import collective_cost  # noqa: E402
from gpucomm.viz.figures.scale_out import NetworkPath, scale_out_busbw_figure  # noqa: E402


def _small(fig):
    assert len(fig.to_json()) < 300_000


def step_y(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["y"]


def step_text(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["text"]


def test_scale_out_figure_matches_hierarchical_cost():
    paths = (NetworkPath("ib_ndr"), NetworkPath("eth_200g", 8))
    fig = scale_out_busbw_figure(paths, node_counts=(1, 2, 16), initial_nodes=2,
                                 measured=[("C08", [2**30, 8 * 2**30], [297.86e9, 338.82e9])])
    _small(fig)
    x = list(fig.data[0].x)
    cost = collective_cost("all_reduce", x[-1], num_ranks=128, link="nvlink4", num_nodes=16, network="ib_ndr")
    assert step_y(fig, 2)[0][-1] == pytest.approx(cost.busbw_bytes_per_s / 1e9)
    one = step_y(fig, 0)
    assert one[0] == one[1]  # a single node does not use the network
    assert list(fig.data[-1].y) == pytest.approx([297.86, 338.82])
