"""Expert-parallel dispatch/combine bytes and their all_to_all cost (gpucomm.model.expert_parallel)."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.expert_parallel import (
    DEEPEP_V1,
    MOE_MODELS,
    all_to_all_bytes_per_gpu,
    get_moe_model,
    moe_layer_all_to_all,
    network_fraction,
    node_limited_network_bytes_per_gpu,
)
from gpucomm.model.fabric import system_fabric


def test_presets_match_their_configs():
    ds = get_moe_model("DeepSeek-V3")
    assert (ds.hidden_size, ds.num_routed_experts, ds.experts_per_token) == (7168, 256, 8)
    assert (ds.num_layers, ds.num_moe_layers, ds.max_nodes_per_token) == (61, 58, 4)
    mx = MOE_MODELS["mixtral-8x7b"]
    assert (mx.hidden_size, mx.num_routed_experts, mx.experts_per_token, mx.num_moe_layers) == (4096, 8, 2, 32)
    assert all(m.source.startswith("https://") for m in MOE_MODELS.values())
    with pytest.raises(GpucommError, match="deepseek-v3"):
        get_moe_model("gpt-moe")


def test_bytes_are_tokens_times_topk_times_hidden_times_element_size():
    assert all_to_all_bytes_per_gpu(4096, 8, 7168, dtype="fp8") == 4096 * 8 * 7168
    assert all_to_all_bytes_per_gpu(4096, 8, 7168, dtype="bf16") == 2 * 4096 * 8 * 7168
    assert all_to_all_bytes_per_gpu(1, 2, 4096, dtype="fp32") == 32768
    for bad in (0, -1, 1.5, True):
        with pytest.raises(GpucommError):
            all_to_all_bytes_per_gpu(bad, 8, 7168)
    with pytest.raises(GpucommError, match="dtype"):
        all_to_all_bytes_per_gpu(1, 1, 1, dtype="int4")


def test_network_fraction():
    assert network_fraction(8, 8) == 0
    assert network_fraction(16, 8) == 0.5
    assert network_fraction(64, 8) == 7 / 8
    with pytest.raises(GpucommError, match="multiple"):
        network_fraction(12, 8)


def test_node_limit_halves_deepseek_v3_network_traffic_on_8_nodes():
    tokens, hidden = 4096, 7168
    limited = node_limited_network_bytes_per_gpu(tokens, hidden, num_nodes=8, max_nodes_per_token=4)
    plain = all_to_all_bytes_per_gpu(tokens, 8, hidden, dtype="fp8") * network_fraction(64, 8)
    assert limited == pytest.approx(plain / 2)
    # fewer nodes than the limit: a token reaches every node at most once
    two = node_limited_network_bytes_per_gpu(tokens, hidden, num_nodes=2, max_nodes_per_token=4)
    assert two == pytest.approx(tokens * hidden * 2 * 0.5)
    assert node_limited_network_bytes_per_gpu(tokens, hidden, num_nodes=1, max_nodes_per_token=4) == 0


def test_layer_cost_is_two_all_to_alls():
    fabric = system_fabric("dgx_h100", num_nodes=2)
    t = moe_layer_all_to_all("deepseek-v3", 4096, ep_size=16, fabric=fabric)
    assert t.combine_bytes_per_gpu == 2 * t.dispatch_bytes_per_gpu  # BF16 back, FP8 out
    ref = collective_cost("all_to_all", t.dispatch_bytes_per_gpu, num_ranks=16, fabric=fabric)
    assert t.dispatch.time_s == ref.time_s
    assert t.time_s == pytest.approx(t.dispatch.time_s + t.combine.time_s)
    assert t.forward_time_s == pytest.approx(58 * t.time_s)
    assert t.network_bytes_per_gpu == pytest.approx(0.5 * 3 * t.dispatch_bytes_per_gpu)
    assert t.num_nodes == 2


def test_across_nodes_each_gpu_gets_one_nic_not_the_node_s_eight():
    """nccl-tests #267: all_to_all busbw across nodes stays near one NIC's rate, N/(N-1) x it (#130)."""
    one_node = moe_layer_all_to_all("deepseek-v3", 4096, ep_size=8, fabric=system_fabric("dgx_h100"))
    for nodes in (2, 8):
        t = moe_layer_all_to_all("deepseek-v3", 4096, ep_size=8 * nodes,
                                 fabric=system_fabric("dgx_h100", num_nodes=nodes))
        nic_share = t.dispatch.busbw_bytes_per_s * (nodes - 1) / nodes
        assert 35e9 < nic_share < 50e9  # one 400 Gb/s NIC (50 GB/s) per GPU, per direction, after efficiency and latency
        assert t.time_s > 3 * one_node.time_s


def test_ep_size_must_fit_the_fabric():
    with pytest.raises(GpucommError):
        moe_layer_all_to_all("mixtral-8x7b", 512, ep_size=9, fabric=system_fabric("dgx_h100", num_nodes=2))
    with pytest.raises(GpucommError):
        moe_layer_all_to_all("mixtral-8x7b", 512, ep_size=16, fabric=system_fabric("dgx_h100"))


def test_deepep_table_is_the_published_one():
    normal = {m.ep_size: m for m in DEEPEP_V1 if m.kernel == "normal"}
    assert normal[8].dispatch_bw_bytes_per_s == 153e9 and normal[8].link == "NVLink"
    assert normal[32].combine_bw_bytes_per_s == 57e9
    ll = {m.ep_size: m for m in DEEPEP_V1 if m.kernel == "low_latency"}
    assert ll[8].dispatch_latency_s == pytest.approx(77e-6) and ll[256].combine_latency_s == pytest.approx(360e-6)
    assert {m.tokens_per_gpu for m in ll.values()} == {128}
