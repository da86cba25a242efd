"""Figures of rack-scale NVLink domains and the scale-out fabric (gpucomm.viz.figures.fabric)."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError

plotly = pytest.importorskip("plotly")

from gpucomm.model.cost import collective_cost  # noqa: E402
from gpucomm.model.fabric import system_fabric  # noqa: E402
from gpucomm.model.fat_tree import oversubscribed_fabric  # noqa: E402
from gpucomm.model.hardware import get_gpu, get_network, get_system  # noqa: E402
from gpucomm.viz.figures.fabric import domain_bandwidth_figure, oversubscription_figure, placement_figure  # noqa: E402

CARTESIAN = {"scatter", "bar"}


def test_domain_bandwidth_bars_are_the_catalog_rates():
    fig = domain_bandwidth_figure(("dgx_h100", "gb200_nvl72"))
    assert {t.type for t in fig.data} <= CARTESIAN
    nvl = get_system("gb200_nvl72")
    assert list(fig.data[0].y) == pytest.approx([450.0, get_gpu(nvl.gpu_key).nvlink_bw_bytes_per_s / 1e9])
    share = get_network(nvl.nic_key).bw_bytes_per_s * nvl.num_nics / nvl.num_gpus / 1e9
    assert list(fig.data[1].y) == pytest.approx([50.0, share])
    with pytest.raises(GpucommError, match="no scale-out NICs"):
        domain_bandwidth_figure(("pcie_8x_rtx4090",))


def test_placement_lines_match_the_cost_model_and_inside_is_faster_for_large_messages():
    fig = placement_figure((16,))
    assert len(fig.data) == 2 and {t.type for t in fig.data} <= CARTESIAN
    assert len(fig.to_json()) < 300_000
    inside, across = fig.data
    size = list(inside.x)[-1]
    expected = collective_cost("all_reduce", size, num_ranks=16, fabric=system_fabric("gb200_nvl72")).time_s * 1e6
    assert inside.y[-1] == pytest.approx(expected, rel=1e-3)
    assert across.y[-1] > 1.2 * inside.y[-1]  # the 8 NICs of each node carry what NVLink carries in the rack
    with pytest.raises(GpucommError, match="group size"):
        placement_figure((12,))
    with pytest.raises(GpucommError, match="group size"):
        placement_figure((80,))


def test_oversubscription_lines_follow_the_oversubscribed_fabric():
    base = system_fabric("dgx_h100", num_nodes=2)
    fig = oversubscription_figure(base, ratios=(1, 2), node_counts=(2, 4))
    assert [t.name for t in fig.data] == ["1:1 leaf (non-blocking)", "2:1 leaf"]
    expected = collective_cost("all_reduce", 2**30, num_ranks=32,
                               fabric=oversubscribed_fabric(base.replace(num_nodes=4), 2)).busbw_bytes_per_s / 1e9
    assert fig.data[1].y[1] == pytest.approx(expected, rel=1e-3)
    assert fig.data[1].y[1] < fig.data[0].y[1]
    with pytest.raises(GpucommError, match="one node"):
        oversubscription_figure(system_fabric("dgx_h100"))
    with pytest.raises(GpucommError, match="node counts"):
        oversubscription_figure(base, node_counts=(1, 2))
    with pytest.raises(GpucommError, match="whole number"):
        oversubscription_figure(base, ratios=(3,))
