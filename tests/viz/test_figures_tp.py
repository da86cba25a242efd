"""gpucomm.model.planning and the figures of the TP-inference, training, scale-out, myths and hardware chapters."""

import json

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost, effective_bw_bytes_per_s
from gpucomm.model.hardware import LINKS, SYSTEMS, get_gpu, get_link
from gpucomm.model.planning import (
    ADAM_MIXED_PRECISION_BYTES_PER_PARAM, BACKWARD_SHARE_OF_COMPUTE, OVERLAPPABLE_STRATEGIES, ServingConfig,
    hybrid_step_estimate, max_batch_within_budget, serving_estimate, system_serving_config, training_comm_estimate,
    training_compute_s, training_memory_bytes_per_gpu)
from gpucomm.model.training import model_params, step_comm

H100 = ServingConfig("H100 SXM", "h100_sxm5", "nvlink4")
RTX4090 = ServingConfig("RTX 4090", "rtx_4090", "pcie4", p2p=False)


# --- planning -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", [k for k, s in SYSTEMS.items() if s.fabric in ("nvswitch", "pcie")])
def test_system_serving_config_uses_the_systems_gpu_and_link(key):
    s = SYSTEMS[key]
    c = system_serving_config(key)
    gpu = get_gpu(s.gpu_key)
    assert c.gpu == gpu.key and c.p2p == s.p2p
    expected = f"nvlink{gpu.nvlink_gen}" if s.fabric == "nvswitch" else f"pcie{gpu.pcie_gen}"
    assert c.link == expected and get_link(c.link)
    assert 1 <= c.max_tp <= 8


def test_system_serving_config_refuses_fabrics_that_are_not_all_to_all():
    with pytest.raises(GpucommError, match="cube_mesh"):
        system_serving_config("dgx1_v100")
    with pytest.raises(GpucommError, match="nope"):
        system_serving_config("nope")


def test_max_batch_within_budget_is_the_largest_batch_that_meets_it():
    p = max_batch_within_budget("llama-3-70b", H100, tp_size=4, min_tokens_per_s_per_user=40)
    assert p.tokens_per_s_per_user >= 40 and p.step.fits_memory
    nxt = H100.step("llama-3-70b", tp_size=4, phase="decode", batch=p.batch + 1)
    assert nxt.tokens_per_s_per_user < 40 or not nxt.fits_memory
    assert p.tokens_per_s_per_gpu == pytest.approx(p.batch * p.tokens_per_s_per_user / 4)


def test_max_batch_within_budget_none_when_out_of_reach():
    assert max_batch_within_budget("llama-3-70b", H100, tp_size=8, min_tokens_per_s_per_user=1e6) is None
    assert max_batch_within_budget("llama-3-70b", H100, tp_size=1, min_tokens_per_s_per_user=1) is None  # no fit
    with pytest.raises(GpucommError, match="budget"):
        max_batch_within_budget("llama-3-70b", H100, tp_size=4, min_tokens_per_s_per_user=0)


def test_serving_estimate_memory_fit_and_first_token():
    one = serving_estimate("llama-3-70b", H100, tp_size=1)
    eight = serving_estimate("llama-3-70b", H100, tp_size=8)
    assert not one.fits_memory and eight.fits_memory
    assert eight.mem_bytes_per_gpu == pytest.approx(one.mem_bytes_per_gpu / 8)
    assert eight.time_to_first_token_s == pytest.approx(eight.prefill.step_s)
    assert serving_estimate("llama-3-8b", RTX4090, tp_size=1).decode_comm_share == 0


def test_training_compute_is_six_flops_per_parameter_and_token():
    t = training_compute_s("llama-3-70b", gpu="h100_sxm5", num_gpus=64, global_batch_tokens=2**22, mfu=0.5)
    assert t == pytest.approx(6 * model_params("llama-3-70b") * 2**22 / (64 * 989.4e12 * 0.5))
    for kwargs, needle in ((dict(mfu=0), "MFU"), (dict(num_gpus=0), "number of GPUs"), (dict(gpu="rtx_2080_ti"), "rtx_2080_ti")):
        args = dict(gpu="h100_sxm5", num_gpus=8, global_batch_tokens=1024) | kwargs
        with pytest.raises(GpucommError, match=needle):
            training_compute_s("llama-3-8b", **args)


def test_training_memory_follows_zero():
    dp = training_memory_bytes_per_gpu("llama-3-70b", "dp", num_gpus=8)
    assert dp == ADAM_MIXED_PRECISION_BYTES_PER_PARAM * model_params("llama-3-70b")
    for s in ("fsdp", "tp", "pp"):
        assert training_memory_bytes_per_gpu("llama-3-70b", s, num_gpus=8) == pytest.approx(dp / 8)
    with pytest.raises(GpucommError, match="strategy"):
        training_memory_bytes_per_gpu("llama-3-70b", "zero9", num_gpus=8)


@pytest.mark.parametrize("strategy", ["dp", "fsdp", "pp", "tp"])
def test_overlap_hides_only_dp_and_fsdp(strategy):
    e = training_comm_estimate("llama-3-8b", strategy, gpu="rtx_4090", link="pcie4", p2p=False, num_gpus=8, overlap=True)
    assert e.comm.time_s == pytest.approx(step_comm("llama-3-8b", strategy, num_gpus=8, link="pcie4", p2p=False,
                                                    global_batch_tokens=8 * 8192).time_s)
    if strategy in OVERLAPPABLE_STRATEGIES:
        assert e.overlapped
        assert e.exposed_s == pytest.approx(max(0.0, e.comm.time_s - BACKWARD_SHARE_OF_COMPUTE * e.compute_s))
    else:
        assert not e.overlapped and e.exposed_s == e.comm.time_s


def test_hybrid_step_adds_tp_inside_nodes_and_dp_across():
    e = hybrid_step_estimate("llama-3-70b", gpu="h100_sxm5", link="nvlink4", num_nodes=16, network="ib_ndr",
                             overlap_dp=False)
    assert e.comm_s == pytest.approx(e.tp.time_s + e.dp.time_s) == pytest.approx(e.exposed_s)
    assert e.comm_share == pytest.approx(e.exposed_s / (e.compute_s + e.exposed_s))
    # a slower network only changes the DP part
    slow = hybrid_step_estimate("llama-3-70b", gpu="h100_sxm5", link="nvlink4", num_nodes=16, network="ib_edr",
                                overlap_dp=False)
    assert slow.tp.time_s == pytest.approx(e.tp.time_s) and slow.dp.time_s > e.dp.time_s
    with pytest.raises(GpucommError, match="number of nodes"):
        hybrid_step_estimate("llama-3-70b", gpu="h100_sxm5", link="nvlink4", num_nodes=1, network="ib_ndr")
    with pytest.raises(GpucommError, match="less than one"):
        hybrid_step_estimate("llama-3-70b", gpu="h100_sxm5", link="nvlink4", num_nodes=16, network="ib_ndr",
                             global_batch_tokens=8192)


# --- figures --------------------------------------------------------------------------------------------------

plotly = pytest.importorskip("plotly")
from gpucomm.viz.figures.chapters_tp import (  # noqa: E402
    NetworkPath, Workload, link_direction_figure, scale_out_busbw_figure, system_comparison_figure,
    tp_decode_scaling_figure, training_comm_figure)

CONFIGS = (H100, ServingConfig("H100 one-shot", "h100_sxm5", "nvlink4", fabric=dict(algorithm="one_shot")), RTX4090,
           ServingConfig("2 GPUs only", "h100_sxm5", "nvlink4", max_tp=2))


def _small(fig):
    assert len(fig.to_json()) < 300_000


def test_tp_decode_figure_matches_the_model_in_every_slider_step():
    fig = tp_decode_scaling_figure("llama-3-70b", CONFIGS, batches=(1, 64), initial_batch=1)
    _small(fig)
    assert len(fig.data) == 2 * len(CONFIGS)
    step = fig.layout.sliders[0].steps[1]  # batch 64
    y, symbols = step.args[0]["y"], step.args[0]["marker.symbol"]
    s = RTX4090.step("llama-3-70b", tp_size=4, phase="decode", batch=64, prompt_len=1024)
    assert y[4][2] == pytest.approx(s.tokens_per_s_per_user) and y[5][2] == pytest.approx(s.tokens_per_s_per_gpu)
    assert symbols[4][2] == ("circle" if s.fits_memory else "circle-open") == "circle-open"
    assert y[6][2] is None  # beyond max_tp
    assert list(fig.data[0].y) == step_y(fig, 0)[0]
    with pytest.raises(GpucommError, match="batch"):
        tp_decode_scaling_figure("llama-3-70b", CONFIGS, batches=(1, 64), initial_batch=3)


def step_y(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["y"]


def step_text(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["text"]


def test_training_figure_bars_and_overlap_buttons():
    fig = training_comm_figure("llama-3-8b", (H100, RTX4090), gpu_counts=(2, 8), initial_gpus=8)
    _small(fig)
    assert len(fig.data) == 2 * 4 + 1
    ys = step_y(fig, 1)
    e = training_comm_estimate("llama-3-8b", "tp", gpu="rtx_4090", link="pcie4", p2p=False, num_gpus=8, overlap=True)
    assert ys[3][1] == pytest.approx(e.comm.time_s)
    d = training_comm_estimate("llama-3-8b", "dp", gpu="h100_sxm5", link="nvlink4", num_gpus=8, overlap=True)
    assert d.exposed_s == 0 and ys[-1][0] == pytest.approx(d.compute_s)
    floor = 10 ** fig.layout.yaxis.range[0]
    assert ys[4][0] == pytest.approx(floor) and step_text(fig, 1)[4][0] == "hidden"  # hidden: drawn at the floor
    f = training_comm_estimate("llama-3-8b", "fsdp", gpu="rtx_4090", link="pcie4", p2p=False, num_gpus=8, overlap=True)
    assert f.exposed_s > 0 and ys[5][1] == pytest.approx(f.exposed_s) and step_text(fig, 1)[5][1] == ""
    buttons = fig.layout.updatemenus[0].buttons
    assert [len(b.args[0]["visible"]) for b in buttons] == [9, 9]
    assert buttons[1].args[0]["visible"][:4] == [False] * 4


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


def test_link_direction_figure_buttons():
    fig = link_direction_figure()
    _small(fig)
    b = fig.layout.updatemenus[0].buttons
    per_dir, bidir, busbw = (btn.args[0]["y"][0] for btn in b)
    assert bidir == pytest.approx([2 * v for v in per_dir])
    assert busbw == pytest.approx([effective_bw_bytes_per_s(k) / 1e9 for k in LINKS])


def test_system_comparison_dropdown():
    w = (Workload("8B", "llama-3-8b", tp_size=1), Workload("405B", "llama-3.1-405b", batch=8))
    fig = system_comparison_figure(w, ("dgx_h100", "dgx_h200", "pcie_8x_rtx4090"))
    _small(fig)
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["8B", "405B"]
    user, gpu = buttons[1].args[0]["y"]
    h200 = serving_estimate("llama-3.1-405b", system_serving_config("dgx_h200"), tp_size=8, batch=8)
    assert user[1] == pytest.approx(h200.tokens_per_s_per_user) and gpu[1] == pytest.approx(h200.tokens_per_s_per_gpu)
    texts = buttons[1].args[0]["text"][0]
    assert "does not fit" in texts[0] and "does not fit" not in texts[1]  # 405B fp16: 8x80 GB no, 8x141 GB yes
    json.loads(fig.to_json())


def test_planning_is_model_layer():
    import subprocess
    import sys

    code = "import sys, gpucomm.model.planning; print(sorted(m for m in ('torch', 'plotly', 'ipywidgets') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
