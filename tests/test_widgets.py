"""Headless widget tests: set a control, the figure's data equals the model; bad input is refused visibly."""

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from gpucomm.plots.calculator import DEFAULT_PATHS, Path, cost_curves, cost_explorer_figure, size_grid
from gpucomm.widgets.calculator import build_cost_widget


def test_changing_controls_updates_traces_to_the_model():
    box = build_cost_widget(link="nvlink3", num_ranks=4)
    fig = box.children[-1]
    box.controls["num_ranks"].value = 8
    box.controls["link"].value = "pcie5"
    time_us, busbw = cost_curves("all_reduce", Path("pcie5"), 8, size_grid())
    assert list(fig.data[0].y) == pytest.approx(time_us)
    assert list(fig.data[1].y) == pytest.approx(busbw)
    assert "8 GPUs" in box.status.value


@pytest.mark.parametrize("control,value", [("msg", "0"), ("msg", "-1MiB"), ("msg", "lots")])
def test_bad_size_is_refused_in_the_status_line_and_figure_kept(control, value):
    box = build_cost_widget()
    before = list(box.children[-1].data[0].y)
    box.controls[control].value = value
    assert "Refused" in box.status.value and value in box.status.value
    assert list(box.children[-1].data[0].y) == before


def test_no_p2p_on_nvlink_is_refused():
    box = build_cost_widget(link="nvlink4")
    box.controls["no_p2p"].value = True
    assert "Refused" in box.status.value


def test_static_slider_steps_carry_the_model_for_each_gpu_count():
    fig = cost_explorer_figure(gpu_counts=(2, 8), initial_gpus=2)
    step8 = fig.layout.sliders[0].steps[1]
    assert step8.label == "8"
    expected = cost_curves("all_reduce", DEFAULT_PATHS[0], 8, size_grid())
    assert list(step8.args[0]["y"][0]) == pytest.approx(expected[0])
    assert list(step8.args[0]["y"][1]) == pytest.approx(expected[1])
    # the initial traces equal the active step
    assert list(fig.data[0].y) == pytest.approx(cost_curves("all_reduce", DEFAULT_PATHS[0], 2, size_grid())[0])
