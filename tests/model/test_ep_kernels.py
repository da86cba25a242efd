"""DeepEP's message sizes, network copies per token, and the decode/prefill balance (gpucomm.model.ep_kernels)."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.ep_kernels import (
    dispatch_balance,
    latency_bound_tokens,
    ll_bytes_per_token,
    ll_combine_copy_bytes,
    ll_dispatch_copy_bytes,
    ll_logical_bw_bytes_per_s,
    ll_receive_slots,
    network_copies_per_token,
)
from gpucomm.model.expert_parallel import DEEPEP_V1, MOE_MODELS
from gpucomm.model.fabric import system_fabric

EIGHT_NODES = system_fabric("dgx_h100", num_nodes=8, network="ib_ndr")


def test_message_sizes_follow_deepeps_kernel():
    # 16-byte header + 7168 FP8 values + 56 float32 scales; BF16: header + 2 bytes per value
    assert ll_dispatch_copy_bytes(7168) == 16 + 7168 + 56 * 4
    assert ll_dispatch_copy_bytes(7168, dtype="bf16") == 16 + 2 * 7168
    assert ll_combine_copy_bytes(7168) == 2 * 7168
    assert ll_dispatch_copy_bytes(4096) == 16 + 4096 + 32 * 4
    with pytest.raises(GpucommError, match="multiple of 128"):
        ll_dispatch_copy_bytes(7000)
    assert ll_dispatch_copy_bytes(7000, dtype="bf16") == 16 + 14000  # no scales in BF16
    with pytest.raises(GpucommError, match="fp8"):
        ll_dispatch_copy_bytes(7168, dtype="fp32")
    for bad in (0, -128, 128.0, True):
        with pytest.raises(GpucommError):
            ll_dispatch_copy_bytes(bad)
        with pytest.raises(GpucommError):
            ll_combine_copy_bytes(bad)


@pytest.mark.parametrize("row", [m for m in DEEPEP_V1 if m.kernel == "low_latency"], ids=lambda m: f"ep{m.ep_size}")
def test_the_message_format_reproduces_deepeps_published_bandwidth(row):
    """DeepEP prints bytes / time; with its own message format, every latency of its table gives its bandwidth
    (within 3 %: the table rounds, and its benchmark masks a few choices)."""
    for direction, time_s, published in (("dispatch", row.dispatch_latency_s, row.dispatch_bw_bytes_per_s),
                                         ("combine", row.combine_latency_s, row.combine_bw_bytes_per_s)):
        bw = ll_logical_bw_bytes_per_s(row.tokens_per_gpu, 8, 7168, time_s, direction=direction)
        assert bw == pytest.approx(published, rel=0.03), (direction, bw, published)


def test_logical_bandwidth_rejects_bad_input():
    with pytest.raises(GpucommError, match="direction"):
        ll_logical_bw_bytes_per_s(128, 8, 7168, 1e-4, direction="both")
    for bad in (0.0, -1.0, float("nan"), "1"):
        with pytest.raises(GpucommError, match="time_s"):
            ll_logical_bw_bytes_per_s(128, 8, 7168, bad, direction="dispatch")
    with pytest.raises(GpucommError):
        ll_logical_bw_bytes_per_s(0, 8, 7168, 1e-4, direction="combine")


def test_network_copies_per_kernel_family():
    ds = MOE_MODELS["deepseek-v3"]
    for nodes in (1, 2, 4, 8, 32):
        c = network_copies_per_token(ds, ep_size=8 * nodes, gpus_per_node=8)
        assert c.low_latency == pytest.approx(8 * (nodes - 1) / nodes)
        assert c.node_limited == pytest.approx(min(4, nodes) * (nodes - 1) / nodes)
        assert c.node_limited <= c.low_latency
    one = network_copies_per_token(ds, ep_size=8, gpus_per_node=8)
    assert (one.low_latency, one.node_limited) == (0.0, 0.0)
    # Mixtral has no node limit: a token reaches at most its k = 2 experts' nodes, so both families agree
    mx = network_copies_per_token("mixtral-8x7b", ep_size=32, gpus_per_node=8)
    assert mx.node_limited == pytest.approx(2 * 3 / 4) and mx.low_latency == pytest.approx(2 * 24 / 32)
    with pytest.raises(GpucommError, match="multiple"):
        network_copies_per_token(ds, ep_size=12, gpus_per_node=8)
    with pytest.raises(GpucommError):
        network_copies_per_token("gpt-moe", ep_size=16, gpus_per_node=8)


def test_dispatch_balance_is_the_bytes_at_line_rate_and_nccls_all_to_all():
    b = dispatch_balance("deepseek-v3", 128, ep_size=64, fabric=EIGHT_NODES)
    size = 128 * 8 * 7408
    assert b.dispatch_bytes_per_gpu == size and b.num_nodes == 8
    assert b.network_bytes_per_gpu == pytest.approx(size * 56 / 64)
    assert b.line_rate_s == pytest.approx(size * 56 / 64 / 50e9)  # one NDR NIC per GPU, 400 Gb/s
    ref = collective_cost("all_to_all", size, num_ranks=64, fabric=EIGHT_NODES)
    assert b.nccl.time_s == pytest.approx(ref.time_s)
    assert b.latency_share == pytest.approx(ref.latency_s / ref.time_s)
    assert b.nccl.time_s > b.line_rate_s  # the model's NCCL never beats the NIC's nominal rate
    prefill = dispatch_balance("deepseek-v3", 4096, ep_size=64, fabric=EIGHT_NODES)
    assert prefill.latency_share < b.latency_share
    assert prefill.line_rate_s == pytest.approx(32 * b.line_rate_s)


def test_dispatch_balance_needs_a_network():
    with pytest.raises(GpucommError, match="one node"):
        dispatch_balance("deepseek-v3", 128, ep_size=8, fabric=system_fabric("dgx_h100"))
    with pytest.raises(GpucommError):
        dispatch_balance("deepseek-v3", 0, ep_size=64, fabric=EIGHT_NODES)
    with pytest.raises(GpucommError):
        dispatch_balance("deepseek-v3", 128, ep_size=12, fabric=EIGHT_NODES)


@pytest.mark.parametrize("nodes", [2, 8])
def test_latency_bound_tokens_is_where_transfer_overtakes_latency(nodes):
    fab = system_fabric("dgx_h100", num_nodes=nodes, network="ib_ndr")
    t = latency_bound_tokens("deepseek-v3", ep_size=8 * nodes, fabric=fab)
    at = dispatch_balance("deepseek-v3", t, ep_size=8 * nodes, fabric=fab).nccl
    below = dispatch_balance("deepseek-v3", t - 1, ep_size=8 * nodes, fabric=fab).nccl
    assert at.transfer_s >= at.latency_s and below.transfer_s < below.latency_s
    with pytest.raises(GpucommError, match="max_tokens"):
        latency_bound_tokens("deepseek-v3", ep_size=8 * nodes, fabric=fab, max_tokens=t - 1)


def test_receive_slots_are_every_token_of_every_rank_per_local_expert():
    slots, filled = ll_receive_slots("deepseek-v3", 128, ep_size=64)
    assert slots == 4 * 128 * 64 and filled == 128 * 8
    for tokens, ep in ((1, 8), (256, 32), (64, 256)):
        s, f = ll_receive_slots("deepseek-v3", tokens, ep_size=ep)
        assert s / f == pytest.approx(256 / 8)  # E / k, whatever the batch and the group
    assert ll_receive_slots("mixtral-8x7b", 16, ep_size=8) == (8 * 16, 32.0)
    with pytest.raises(GpucommError, match="divide"):
        ll_receive_slots("deepseek-v3", 128, ep_size=48)
    with pytest.raises(GpucommError):
        ll_receive_slots("deepseek-v3", 0, ep_size=64)


def test_bytes_per_token_are_k_messages():
    assert ll_bytes_per_token("deepseek-v3", direction="dispatch") == 8 * 7408
    assert ll_bytes_per_token("deepseek-v3", direction="combine") == 8 * 14336
    assert ll_bytes_per_token("mixtral-8x7b", direction="combine") == 2 * 2 * 4096
    with pytest.raises(GpucommError, match="direction"):
        ll_bytes_per_token("deepseek-v3", direction="both")
