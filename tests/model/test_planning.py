"""Serving and training plans (gpucomm.model.planning), and the numbers of NVIDIA's NVLink/NVSwitch inference blog."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import pair_bw_bytes_per_s, per_gpu_bw_bytes_per_s, wire_bytes_per_link
from gpucomm.model.fabric import make_fabric
from gpucomm.model.measurements import NVIDIA_BLOG_TP2_THROUGHPUT
from gpucomm.model.planning import (
    ADAM_MIXED_PRECISION_BYTES_PER_PARAM,
    BACKWARD_SHARE_OF_COMPUTE,
    OVERLAPPABLE_STRATEGIES,
    hybrid_step_estimate,
    max_batch_within_budget,
    request_throughput,
    serving_estimate,
    training_comm_estimate,
    training_compute_s,
    training_memory_bytes_per_gpu,
)
from gpucomm.model.tp import tp_forward_comm, tp_step
from gpucomm.model.training import model_params, step_comm

H100 = make_fabric("nvlink4", gpu="h100_sxm5", name="H100 SXM")
RTX4090 = make_fabric("pcie4", p2p=False, gpu="rtx_4090", name="RTX 4090")
MESH = make_fabric("nvlink4", gpu="h200_sxm", topology="mesh", mesh_size=8, name="point-to-point")
SWITCH = make_fabric("nvlink4", gpu="h200_sxm", name="NVSwitch")
CLUSTER = make_fabric("nvlink4", gpu="h100_sxm5", num_nodes=16, network="ib_ndr")


# --- serving and training plans --------------------------------------------------------------------------------------


def test_max_batch_within_budget_is_the_largest_batch_that_meets_it():
    p = max_batch_within_budget("llama-3-70b", H100, tp_size=4, min_tokens_per_s_per_user=40)
    assert p.tokens_per_s_per_user >= 40 and p.step.fits_memory
    nxt = tp_step("llama-3-70b", fabric=H100, tp_size=4, phase="decode", batch=p.batch + 1)
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
    assert eight.time_to_first_token_s == pytest.approx(eight.prefill.time_per_pass_s)
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
    e = training_comm_estimate("llama-3-8b", strategy, fabric=RTX4090, num_gpus=8, overlap=True)
    assert e.comm.time_s == pytest.approx(step_comm("llama-3-8b", strategy, num_gpus=8, fabric=RTX4090,
                                                    global_batch_tokens=8 * 8192).time_s)
    if strategy in OVERLAPPABLE_STRATEGIES:
        assert e.overlapped
        assert e.exposed_s == pytest.approx(max(0.0, e.comm.time_s - BACKWARD_SHARE_OF_COMPUTE * e.compute_s))
    else:
        assert not e.overlapped and e.exposed_s == e.comm.time_s


def test_hybrid_step_adds_tp_inside_nodes_and_dp_across():
    e = hybrid_step_estimate("llama-3-70b", fabric=CLUSTER, overlap_dp=False)
    assert e.comm_s == pytest.approx(e.tp.time_s + e.dp.time_s) == pytest.approx(e.exposed_s)
    assert e.comm_share == pytest.approx(e.exposed_s / (e.compute_s + e.exposed_s))
    # a slower network only changes the DP part
    slow = hybrid_step_estimate("llama-3-70b", fabric=CLUSTER.replace(network="ib_edr"), overlap_dp=False)
    assert slow.tp.time_s == pytest.approx(e.tp.time_s) and slow.dp.time_s > e.dp.time_s
    with pytest.raises(GpucommError, match="number of nodes"):
        hybrid_step_estimate("llama-3-70b", fabric=CLUSTER.one_node())
    with pytest.raises(GpucommError, match="less than one"):
        hybrid_step_estimate("llama-3-70b", fabric=CLUSTER, global_batch_tokens=8192)


def test_planning_is_model_layer(fresh_process):
    ran = fresh_process["model"]  # every model module imported in a fresh interpreter (tests/conftest.py)
    assert "gpucomm.model.planning" in ran.modules and ran.heavy(("torch", "plotly", "ipywidgets")) == []


# --- NVIDIA's blog: NVLink and NVSwitch supercharge LLM inference (Aug 2024) ----------------------------------------


def test_nvidia_blog_point_to_point_figures_are_both_directions():
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8)
    pair = pair_bw_bytes_per_s(mesh)
    assert 2 * pair / 1e9 == pytest.approx(128, rel=0.01)  # NVIDIA's "128 GB/s" per pair: both directions
    assert pair / 1e9 == pytest.approx(64.3, abs=0.05)
    assert per_gpu_bw_bytes_per_s(mesh, 8) == per_gpu_bw_bytes_per_s(make_fabric("nvlink4"), 8)  # "7 x 128" ~ "900"
    assert per_gpu_bw_bytes_per_s(mesh, 2) * 7 == pytest.approx(per_gpu_bw_bytes_per_s(mesh, 8))


def test_nvidia_blog_20_gb_per_query_and_per_direction_times():
    pre = tp_forward_comm("llama-3-70b", tp_size=2, num_tokens=8192, fabric="nvlink4")
    query = pre.msg_bytes * pre.all_reduces_per_pass
    assert query == 20 * 2**30  # NVIDIA's "20 GB"
    wire = wire_bytes_per_link("all_reduce", query, num_ranks=2, algorithm="ring")
    assert wire == query  # TP=2 ring: each message crosses the pair's link once in each direction
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8)
    assert wire / pair_bw_bytes_per_s(mesh) == pytest.approx(2 * 20e9 / 128e9, rel=0.1)  # twice NVIDIA's 150 ms


def test_request_throughput_reproduces_nvidia_table_3_trend():
    ratios = []
    for batch, (p2p, nvs) in NVIDIA_BLOG_TP2_THROUGHPUT.items():
        m = request_throughput("llama-3-70b", MESH, tp_size=2, batch=batch, isl=8192, osl=256)
        s = request_throughput("llama-3-70b", SWITCH, tp_size=2, batch=batch, isl=8192, osl=256)
        assert m.fits_memory and s.fits_memory
        assert m.tokens_per_s_per_gpu == pytest.approx(p2p, rel=0.2)
        assert s.tokens_per_s_per_gpu == pytest.approx(nvs, rel=0.2)
        ratios.append(s.tokens_per_s_per_gpu / m.tokens_per_s_per_gpu)
        assert ratios[-1] == pytest.approx(nvs / p2p, abs=0.12)
    assert ratios == sorted(ratios) and ratios[0] < 1.1 and ratios[-1] > 1.35


def test_request_throughput_composition_and_errors():
    r = request_throughput("llama-3-70b", SWITCH, tp_size=2, batch=4, isl=1024, osl=128)
    assert r.request_s == pytest.approx(r.prefill_s + 128 * r.decode_step_s)
    assert r.tokens_per_s_per_gpu == pytest.approx(4 * 128 / r.request_s / 2)
    assert 0 < r.prefill_comm_share < 1 and 0 < r.decode_comm_share < 1
    with pytest.raises(GpucommError, match="output length"):
        request_throughput("llama-3-70b", SWITCH, tp_size=2, batch=4, isl=1024, osl=0)
