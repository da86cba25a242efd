"""Headless calculator tests: set a control, the figure's data equals the model; bad input is refused visibly.

Also: the static explorers' slider steps and dropdown buttons carry the same model numbers, and every
input field has the metadata the controls are made from.
"""

import dataclasses

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost, pair_bw_bytes_per_s, per_gpu_bw_bytes_per_s
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.hardware import get_system, pcie_bw_bytes_per_s
from gpucomm.model.training import step_comm
from gpucomm.viz.calculators.collective import (
    DEFAULT_FABRICS,
    EXPLORER_SIZES,
    CostInputs,
    collective_explorer_figure,
    cost_curves,
    cost_explorer_figure,
    cost_series,
    size_grid,
)
from gpucomm.viz.calculators.generations import GenerationsInputs, generations_explorer_figure
from gpucomm.viz.calculators.inputs import (
    check_inputs,
    compact,
    get_interconnect,
    input_fields,
    interconnect_choices,
    interconnect_key,
    nodes_for,
    system_choices,
)
from gpucomm.viz.calculators.mesh import MeshInputs, mesh_curves, mesh_explorer_figure
from gpucomm.viz.calculators.tp_inference import (
    BATCHES,
    LIVE_BAR,
    NVIDIA_BLOG_TABLE3,
    TPInputs,
    tp_explorer_figure,
    tp_figure,
    tp_request,
    tp_speedup,
    tp_update,
)
from gpucomm.viz.calculators.training import TrainingInputs, step_compute_s, training_explorer_figure
from gpucomm.viz.widgets.calculators import (
    build_generations_widget,
    build_mesh_widget,
    build_tp_widget,
    build_training_widget,
)
from gpucomm.viz.widgets.collective import build_cost_widget

INPUT_CLASSES = (CostInputs, TPInputs, MeshInputs, GenerationsInputs, TrainingInputs)


# --- the collective cost calculator -------------------------------------------------------------

def test_changing_controls_updates_traces_to_the_model():
    box = build_cost_widget(link="nvlink3", num_ranks=4)
    fig = box.children[-1]
    box.controls["num_ranks"].value = 8
    box.controls["link"].value = "pcie5"
    time_us, busbw = cost_curves("all_reduce", make_fabric("pcie5"), 8, size_grid())
    assert list(fig.data[0].y) == pytest.approx(time_us)
    assert list(fig.data[1].y) == pytest.approx(busbw)
    assert "8 GPUs" in box.status.value


@pytest.mark.parametrize("value", ["0", "-1MiB", "lots"])
def test_bad_size_is_refused_in_the_status_line_and_figure_kept(value):
    box = build_cost_widget()
    before = list(box.children[-1].data[0].y)
    box.controls["msg_bytes"].value = value
    assert "Refused" in box.status.value and value in box.status.value
    assert list(box.children[-1].data[0].y) == before


def test_protocol_menu_has_ll128_and_it_reaches_the_model():
    from gpucomm.model.cost import PROTOCOLS

    box = build_cost_widget(system="dgx_h100", num_ranks=8)
    assert [v for _, v in box.controls["protocol"].options] == ["auto", *PROTOCOLS]
    box.controls["protocol"].value = "LL128"
    assert "LL128 protocol)" in box.status.value, box.status.value


def test_no_p2p_on_nvlink_is_refused():
    box = build_cost_widget(link="nvlink4")
    box.controls["p2p"].value = False
    assert "Refused" in box.status.value


def test_system_algorithm_and_nodes_reach_the_model_alpha_and_beta_apart():
    box = build_cost_widget()
    box.controls["system"].value = "dgx_a100"
    box.controls["algorithm"].value = "tree"
    box.controls["num_ranks"].value = 16
    box.controls["num_nodes"].value = 2
    assert "(tree," in box.status.value  # NCCL's tree across nodes: the tuner's estimate
    box.controls["algorithm"].value = "auto"
    fig = box.figure
    expected = cost_series(CostInputs(system="dgx_a100", num_ranks=16, num_nodes=2), size_grid())
    assert list(fig.data[0].y) == pytest.approx(expected["time_us"])
    assert list(fig.data[2].y) == pytest.approx(expected["alpha_us"])
    assert list(fig.data[3].y) == pytest.approx(expected["beta_us"])
    assert list(fig.data[4].y) == pytest.approx(expected["algbw_gbs"])
    assert [a + b for a, b in zip(fig.data[2].y, fig.data[3].y)] == pytest.approx(list(fig.data[0].y))
    point = collective_cost("all_reduce", 64 * 2**20, num_ranks=16,
                            fabric=make_fabric("nvlink3", num_nodes=2, network="ib_hdr", nics_per_node=8))
    assert fig.data[5].y[0] == pytest.approx(point.time_s * 1e6)
    # NCCL's choice across nodes (its tuner), not the explicit hierarchical schedule
    assert "2 nodes" in box.status.value and any(f"({a}," in box.status.value for a in ("ring", "tree"))


def test_compare_draws_catalog_systems_with_their_own_nodes():
    box = build_cost_widget(num_ranks=16, num_nodes=2)
    box.controls["compare"].value = ("gb200_nvl72", "pcie_8x_rtx4090")
    names = [t.name for t in box.figure.data]
    nvl = names.index("GB200 NVL72 (rack)")
    expected = cost_series(CostInputs(system="gb200_nvl72", num_ranks=16, num_nodes=1), size_grid())
    assert box.figure.data[nvl].visible is True
    assert list(box.figure.data[nvl].y) == pytest.approx(expected["time_us"])
    pcie = names.index(get_system("pcie_8x_rtx4090").name)  # 16 GPUs need 2 boxes, which have no NICs
    assert box.figure.data[pcie].visible is False


def test_cost_explorer_slider_steps_carry_the_model_for_each_gpu_count():
    fig = cost_explorer_figure(gpu_counts=(2, 8), initial_gpus=2)
    step8 = fig.layout.sliders[0].steps[1]
    assert step8.label == "8"
    expected = cost_curves("all_reduce", DEFAULT_FABRICS[0], 8, size_grid())
    assert list(step8.args[0]["y"][0]) == pytest.approx(expected[0])
    assert list(step8.args[0]["y"][1]) == pytest.approx(expected[1])
    assert list(fig.data[0].y) == pytest.approx(cost_curves("all_reduce", DEFAULT_FABRICS[0], 2, size_grid())[0])


def test_collective_explorer_steps_and_views():
    sizes = list(EXPLORER_SIZES)
    fig = collective_explorer_figure(systems=("dgx_h100", "gb200_nvl72"), gpu_counts=(8, 64), initial_gpus=8)
    step = fig.layout.sliders[0].steps[1]
    assert step.label == "64"
    ys = step.args[0]["y"]
    dgx = cost_series(CostInputs(system="dgx_h100", num_ranks=64, num_nodes=8), sizes)
    nvl = cost_series(CostInputs(system="gb200_nvl72", num_ranks=64, num_nodes=1), sizes)
    assert ys[0] == pytest.approx(dgx["time_us"], rel=1e-3)  # view 0, system 0, time
    assert ys[5] == pytest.approx(nvl["time_us"], rel=1e-3)  # view 0, system 1, time
    all_gather_dgx = ys[2 * 5 * 2]  # view 2 (all_gather), system 0: a ring across the 8 nodes
    eight_nodes = make_fabric("nvlink4", num_nodes=8, network="ib_ndr")
    ag = [collective_cost("all_gather", s, num_ranks=64, fabric=eight_nodes).time_s * 1e6
          for s in sizes]
    assert list(all_gather_dgx) == pytest.approx(ag, rel=1e-3)
    menu = fig.layout.updatemenus[0]
    assert [b.label for b in menu.buttons][:2] == ["all_reduce", "all_reduce (ring)"]
    # 4 views x 2 systems x 5 curves, then the 10-90 % band of each time curve (low, high) in the same order
    assert sum(menu.buttons[1].args[0]["visible"]) == 14 and len(fig.data) == 4 * 2 * 5 + 4 * 2 * 2
    bands = 4 * 2 * 5
    assert ys[bands + 2] == pytest.approx(nvl["time_low_us"], rel=1e-3)  # view 0, system 1, low
    assert ys[bands + 3] == pytest.approx(nvl["time_high_us"], rel=1e-3)
    assert fig.data[bands + 3].fill == "tonexty" and fig.data[bands + 3].legendgroup == fig.data[5].legendgroup
    assert menu.buttons[1].args[0]["visible"][bands + 4:bands + 8] == [True] * 4  # view 1's bands with its curves


# --- TP inference -------------------------------------------------------------------------------------

def test_tp_widget_traces_equal_the_model():
    box = build_tp_widget()
    box.controls["batch"].value = 16
    box.controls["interconnect"].value = "nvlink4:mesh8"
    r = tp_request("llama-3-70b", gpu="h200_sxm", tp_size=2, interconnect="nvlink4:mesh8", batch=16)
    fig = box.figure
    assert list(fig.data[0].y) == pytest.approx([r.prefill.compute_per_layer_s * 1e3])
    assert list(fig.data[1].y) == pytest.approx([r.prefill.comm_per_layer_s * 1e3])
    assert list(fig.data[2].y) == pytest.approx([r.decode.compute_per_layer_s * 1e6])
    assert list(fig.data[3].y) == pytest.approx([r.decode.comm_per_layer_s * 1e6])
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8, gpu="h200_sxm")
    speedup = tp_speedup("llama-3-70b", tp_size=4, fabric=mesh, phase="decode", batch=16, prompt_len=8192,
                         context_len=8192 + 128)
    assert list(fig.data[4].x) == [1, 2, 4, 8] and fig.data[4].y[2] == pytest.approx(speedup)
    per_gpu = [tp_request("llama-3-70b", gpu="h200_sxm", tp_size=2, interconnect="nvlink4:mesh8", batch=b)
               .tokens_per_s_per_gpu for b in BATCHES]
    assert list(fig.data[6].y) == pytest.approx(per_gpu)
    assert list(fig.data[-1].y) == list(NVIDIA_BLOG_TABLE3["nvlink4:switch"])  # Table 3 applies to this setting
    assert "P2P mesh of 8" in fig.layout.title.text  # the interconnect is named in the title
    box.controls["tp_size"].value = 4
    assert set(fig.data[-1].y) == {None} and fig.data[-1].visible is not False  # no points, the trace stays
    assert "tok/s per user" in box.status.value


def test_tp_live_updates_only_move_data():
    """One interconnect (the live modes): no input changes a trace's name, visibility or the bar category, so that
    the book draws every live update by its fast path; the interconnect is named in the title."""
    names = [t.name for t in tp_figure(TPInputs()).data]
    for inputs in (TPInputs(), TPInputs(tp_size=4), TPInputs(interconnect="nvlink4:mesh8"),
                   TPInputs(interconnect="pcie4:no-p2p", tp_size=8, batch=32)):
        update = tp_update(inputs)
        assert set(update.data) <= {"x", "y", "text"} and set(update.layout) == {"title.text"}
        assert [update.data["x"][i] for i in range(4)] == [[LIVE_BAR]] * 4
        assert [t.name for t in tp_figure(inputs).data] == names
        label = get_interconnect(inputs.interconnect).label.replace(" (via host memory)", "")
        assert label in update.layout["title.text"]


@pytest.mark.parametrize("control,value,words", [("tp_size", 3, "does not divide"), ("batch", 0, "batch 0"),
                                                 ("prompt_len", -5, "prompt"), ("tp_size", 16, "mesh of 8")])
def test_tp_widget_refuses_bad_inputs(control, value, words):
    box = build_tp_widget(interconnect="nvlink4:mesh8")
    before = list(box.figure.data[0].y)
    box.controls[control].value = value
    assert "Refused" in box.status.value and words in box.status.value
    assert list(box.figure.data[0].y) == before


def test_tp_model_reproduces_the_shape_of_nvidias_table3():
    """P2P mesh vs NVSwitch at TP=2 (NVIDIA's blog, Table 3): same order of magnitude, the switch's advantage grows with batch."""
    def ratio(b):
        mesh, switch = (tp_request("llama-3-70b", gpu="h200_sxm", tp_size=2, interconnect=k, batch=b).tokens_per_s_per_gpu
                        for k in ("nvlink4:mesh8", "nvlink4:switch"))
        return switch / mesh, mesh
    ratios = [ratio(b) for b in NVIDIA_BLOG_TABLE3["batch"]]
    assert [r for r, _ in ratios] == sorted(r for r, _ in ratios)
    assert ratios[0][0] < 1.15 and ratios[-1][0] > 1.3  # NVIDIA: 1.0x at batch 1, 1.5x at batch 32
    for (_, mesh), published in zip(ratios, NVIDIA_BLOG_TABLE3["nvlink4:mesh8"]):
        assert 0.7 < mesh / published < 1.3


def test_tp_explorer_slider_restyles_the_tp_dependent_traces():
    fig = tp_explorer_figure()
    step = fig.layout.sliders[0].steps[2]
    assert step.label == "4"
    traces = step.args[2]
    assert list(traces[:4]) == [0, 1, 2, 3] and 4 not in traces  # speed-up lines do not depend on the slider
    r = tp_request("llama-3-70b", gpu="h200_sxm", tp_size=4, interconnect="nvlink4:switch", batch=8)
    assert step.args[0]["y"][3][0] == pytest.approx(r.decode.comm_per_layer_s * 1e6, rel=1e-3)


# --- mesh vs NVSwitch ---------------------------------------------------------------------------------

def test_mesh_widget_traces_equal_the_model():
    box = build_mesh_widget()
    box.controls["mesh_size"].value = 4
    box.controls["link"].value = "nvlink3"
    mesh = make_fabric("nvlink3", topology="mesh", mesh_size=4)
    fig = box.figure
    assert list(fig.data[0].x) == [2, 3, 4]
    assert list(fig.data[0].y) == pytest.approx([pair_bw_bytes_per_s(mesh) / 1e9] * 3)
    assert list(fig.data[1].y) == pytest.approx([per_gpu_bw_bytes_per_s(mesh, n) / 1e9 for n in (2, 3, 4)])
    t = collective_cost("all_reduce", 128 * 2**20, num_ranks=3,
                        fabric=make_fabric("nvlink3", topology="mesh", mesh_size=4)).time_s
    assert fig.data[4].y[1] == pytest.approx(t * 1e6)


def test_mesh_widget_refuses_nvls_on_a_mesh_and_a_one_gpu_board():
    box = build_mesh_widget()
    box.controls["algorithm"].value = "nvls"
    assert "Refused" in box.status.value and "nvls" in box.status.value
    box.controls["algorithm"].value = "ring"
    box.controls["mesh_size"].value = 1
    assert "Refused" in box.status.value and "from 2 to 64" in box.status.value


def test_mesh_explorer_matches_the_shape_of_nvidias_table():
    c = mesh_curves(MeshInputs(link="nvlink4", mesh_size=8))
    assert c["mesh_pair_gbs"][0] == pytest.approx(450 / 7)  # NVIDIA's blog: "128 GB/s" = 2 x 64.3 per direction
    assert c["mesh_gpu_gbs"][-1] == pytest.approx(c["switch_gpu_gbs"][-1])  # 8 GPUs: 7 links in use
    fig = mesh_explorer_figure()
    assert len(fig.layout.updatemenus[0].buttons) == 3 and len(fig.layout.sliders[0].steps) >= 10


# --- generations --------------------------------------------------------------------------------------

def test_generations_widget_traces_equal_the_catalog():
    box = build_generations_widget()
    box.controls["pcie_lanes"].value = 4
    fig = box.figure
    assert list(fig.data[0].y) == pytest.approx([pcie_bw_bytes_per_s(g, 4) / 1e9 for g in range(1, 8)])
    nvlink = list(fig.data[1].y)
    box.controls["both_directions"].value = True
    assert list(fig.data[1].y) == pytest.approx([2 * v for v in nvlink])
    # PCIe both ways as PCI-SIG prints it (x4 of 5.0: 32 GB/s, raw bit rate), not twice the per-direction rate
    assert list(fig.data[0].y)[4] == pytest.approx(32) and list(fig.data[0].y)[4] > 2 * pcie_bw_bytes_per_s(5, 4) / 1e9
    assert "both directions" in box.status.value


def test_generations_explorer_controls_touch_different_traces():
    fig = generations_explorer_figure()
    direction, dtype = fig.layout.updatemenus
    assert list(direction.buttons[1].args[2]) == [0, 1, 2] and list(dtype.buttons[2].args[2]) == [3, 4]
    assert direction.buttons[1].args[0]["y"][1][-1] == pytest.approx(1800)  # NVLink 5: 900 GB/s each way


# --- training -----------------------------------------------------------------------------------------

def test_training_widget_traces_equal_the_model():
    box = build_training_widget()
    box.controls["model"].value = "llama-3-8b"
    box.controls["num_gpus"].value = 4
    compute = step_compute_s("llama-3-8b", gpu="h100_sxm5", num_gpus=4, tokens=4 * 2**20)
    expected = [step_comm("llama-3-8b", s, num_gpus=4, fabric="nvlink4", compute_s=compute, overlap=True)
                for s in ("dp", "fsdp", "pp", "tp")]
    fig = box.figure
    assert list(fig.data[0].y) == pytest.approx([e.volume_bytes / 1e9 for e in expected])
    assert list(fig.data[1].y) == pytest.approx([e.time_s for e in expected])
    assert list(fig.data[2].y) == [e.exposed_s or None for e in expected]  # fully hidden: no bar on a log axis
    assert [t.endswith("all hidden") for t in fig.data[1].text] == [e.exposed_s == 0 for e in expected]
    assert list(fig.data[3].y) == pytest.approx([compute] * 4)


def test_training_across_nodes_models_every_strategy_and_refuses_bad_values(monkeypatch):
    box = build_training_widget()
    box.controls["num_gpus"].value = 16
    assert all(y is not None for y in box.figure.data[0].y)  # DP, FSDP, PP and TP all reach the network
    import gpucomm.viz.calculators.training as calc

    real = calc.step_comm

    def no_fsdp(model, strategy, **kw):
        if strategy == "fsdp":
            raise GpucommError("fsdp refused for this test")
        return real(model, strategy, **kw)

    monkeypatch.setattr(calc, "step_comm", no_fsdp)
    box.controls["num_gpus"].value = 24
    assert box.figure.data[0].y[1] is None and box.figure.data[0].text[1] == "not modelled"  # a refused strategy
    monkeypatch.undo()
    box.controls["num_gpus"].value = 20
    assert "Refused" in box.status.value and "spread evenly" in box.status.value
    box.controls["mfu"].value = 0.0
    assert "Refused" in box.status.value and "MFU" in box.status.value


def test_training_explorer_dropdown_and_slider():
    fig = training_explorer_figure()
    assert len(fig.layout.updatemenus[0].buttons) == 3 and len(fig.data) == 12
    step = fig.layout.sliders[0].steps[0]
    assert step.label == "2"


# --- inputs and their metadata ------------------------------------------------------------------------

@pytest.mark.parametrize("cls", INPUT_CLASSES)
def test_every_field_has_label_help_and_a_range_or_choices(cls):
    check_inputs(cls())
    for name, meta in input_fields(cls):
        assert meta["label"] and meta["help"], name
        if meta["kind"] in ("choice", "multi"):
            assert meta["choices"](), name
        elif meta["kind"] in ("int", "float", "size"):
            assert meta["min"] is not None and meta["max"] is not None, name


@pytest.mark.parametrize("cls,field,value", [(CostInputs, "num_ranks", 0), (CostInputs, "system", "dgx1_v100"),
                                             (TPInputs, "dtype", "int3"), (TPInputs, "batch", 1.5),
                                             (MeshInputs, "msg_bytes", 0), (GenerationsInputs, "pcie_lanes", 3),
                                             (TrainingInputs, "mfu", float("nan")), (CostInputs, "p2p", "yes")])
def test_check_inputs_refuses_with_the_field_name(cls, field, value):
    with pytest.raises(GpucommError, match="not valid"):
        check_inputs(dataclasses.replace(cls(), **{field: value}))


def test_presets_come_from_the_catalog():
    from gpucomm.model.hardware import LINKS, SYSTEMS

    keys = [k for _, k in interconnect_choices()]
    assert len(keys) == 2 * len(LINKS)
    assert all(interconnect_key(get_interconnect(k)) == k for k in keys)
    assert {k for _, k in system_choices()} - {"custom"} <= set(SYSTEMS)
    assert get_interconnect("nvlink4:mesh8") == make_fabric("nvlink4", topology="mesh", mesh_size=8,
                                                            name="NVLink 4.0 P2P mesh of 8")
    with pytest.raises(GpucommError):
        get_interconnect("nvlink9:switch")


def test_system_inputs_give_the_systems_fabric_and_nodes():
    fabric = CostInputs(system="dgx_h100", num_ranks=16, num_nodes=2).fabric()
    assert fabric == system_fabric("dgx_h100", num_nodes=2)
    assert (fabric.link.key, fabric.network, fabric.nics_per_node) == ("nvlink4", "ib_ndr", 8)
    assert CostInputs(system="pcie_8x_rtx4090", num_ranks=4).fabric().p2p is False
    with pytest.raises(GpucommError, match="at most 8"):
        cost_series(CostInputs(system="dgx_h100", num_ranks=16), [2**20])
    with pytest.raises(GpucommError, match="no scale-out NICs"):
        CostInputs(system="pcie_8x_rtx4090", num_ranks=16, num_nodes=2).fabric()
    assert nodes_for("pcie_8x_rtx4090", 7) == 1 and nodes_for("dgx_a100", 9) == 3


def test_compact_rounds_and_blanks():
    assert compact([1.23456, float("inf"), 3]) == [1.235, None, 3]


def test_system_preset_greys_out_the_custom_link_controls():
    from gpucomm.viz.widgets.collective import CUSTOM_ONLY, build_cost_widget

    box = build_cost_widget(system="dgx_h100")
    assert all(box.controls[n].disabled for n in CUSTOM_ONLY if n in box.controls)
    box.controls["system"].value = "custom"
    assert not any(box.controls[n].disabled for n in CUSTOM_ONLY if n in box.controls)
