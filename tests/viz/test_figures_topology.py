"""Figures of how GPUs are wired: mesh vs NVSwitch, ``nvidia-smi topo -m`` (gpucomm.viz.figures.topology)."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.fabric import make_fabric

plotly = pytest.importorskip("plotly")

from gpucomm.measure.topology import DGX1_P100_TOPO, TOPO_CODES, parse_topo_matrix  # noqa: E402
from gpucomm.model.cost import collective_cost  # noqa: E402
from gpucomm.viz.figures.topology import mesh_vs_switch_figure, topo_matrix_figure  # noqa: E402


def _size_kb(fig) -> float:
    return len(fig.to_json()) / 1024


def test_mesh_vs_switch_figure_buttons_carry_the_model():
    sizes = (16 * 2**10, 2**30)
    fig = mesh_vs_switch_figure("nvlink4", sizes=sizes, initial_size=2**30)
    assert len(fig.data) == 6
    menu = fig.layout.updatemenus[0]
    assert [b.label for b in menu.buttons] == ["16 KiB", "1 GiB"] and menu.active == 1
    y_sw, y_mesh = menu.buttons[0].args[0]["y"]
    mesh = make_fabric("nvlink4", topology="mesh")
    assert y_sw[0] == pytest.approx(collective_cost("all_reduce", 16 * 2**10, num_ranks=2, fabric="nvlink4").time_s * 1e6,
                                    rel=1e-3)
    assert y_mesh[-1] == pytest.approx(collective_cost("all_reduce", 16 * 2**10, num_ranks=8, fabric=mesh).time_s * 1e6,
                                       rel=1e-3)
    assert list(menu.buttons[0].args[2]) == [4, 5]  # only the time traces change
    assert list(fig.data[4].y) == list(menu.buttons[1].args[0]["y"][0])
    with pytest.raises(GpucommError, match="initial size"):
        mesh_vs_switch_figure(sizes=sizes, initial_size=123)


def test_topo_matrix_figure():
    m = parse_topo_matrix(DGX1_P100_TOPO)
    fig = topo_matrix_figure(m)
    heat = fig.data[0]
    assert list(heat.x) == list(m.devices)
    assert heat.z[0][0] == 0 and heat.z[0][1] == TOPO_CODES["NV#"].rank and heat.text[0][5] == "SOC"
    gpus_only = fig.layout.updatemenus[0].buttons[1].args[0]
    assert gpus_only["x"][0] == list(m.gpus)
    assert _size_kb(fig) < 300
    assert not topo_matrix_figure(parse_topo_matrix(
        "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n")).layout.updatemenus
