"""Issue 23 item 6: the GPUs people rent and own, TCP sockets, GPUDirect RDMA off, any NIC count, 1- and 2-GPU nodes.

Each new catalog entry and option: its units and sources, that ``collective_cost`` prices every collective on it, and
that its time never falls as the message grows (a size grid from 1 B to 16 GiB).
"""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.hardware import get_gpu, get_network, get_system
from gpucomm.model.nccl_fabric import delivered_bw_bytes_per_s, fabric_to_comm, nic_feed_bw_bytes_per_s

NEW_GPUS = ("l40s", "l4", "a10", "a10g", "rtx_6000_ada", "rtx_pro_6000_blackwell", "h100_nvl", "gh200", "b300_hgx",
            "b300_gb300")
NEW_SYSTEMS = ("dgx_b300", "gb300_nvl72", "quad_gh200", "pcie_4x_l40s", "pcie_8x_l4")
SIZES = [1, 8, 1000, 4096, 65535, 65536, 2**20 + 1, 48 * 2**20, 49 * 2**20, 2**30, 16 * 2**30]


def _options() -> dict:
    """Fabrics of the new options, with the GPUs of the collective: what each exercises."""
    h100 = dict(gpu="h100_sxm5", num_nodes=2)
    return {
        "socket_over_25gbe_l4": (make_fabric("pcie4", gpu="l4", num_nodes=2, network="eth_25g", net_transport="socket"), 16),
        "socket_over_100gbe_h100": (make_fabric("nvlink4", network="eth_100g", net_transport="socket", **h100), 16),
        "gdr_off_ib_h100": (make_fabric("nvlink4", network="ib_ndr", gdr=False, **h100), 16),
        "one_nic_per_node_h100": (make_fabric("nvlink4", network="ib_ndr", nics_per_node=1, **h100), 16),
        "three_nics_per_node_l40s": (make_fabric("pcie4", gpu="l40s", num_nodes=2, network="eth_100g", nics_per_node=3), 8),
        "one_gpu_per_node_ib": (make_fabric("nvlink4", network="ib_ndr", gdr=False, **h100), 2),
        "one_gpu_per_node_8_nodes": (make_fabric("pcie5", num_nodes=8, network="eth_100g", net_transport="socket"), 8),
        "two_gpus_per_node_roce": (make_fabric("pcie4", gpu="a10", num_nodes=2, network="eth_100g"), 4),
        "quad_gh200_two_nodes": (system_fabric("quad_gh200", num_nodes=2), 8),
    }


@pytest.mark.parametrize("key", NEW_GPUS)
def test_new_gpus_are_sourced_with_si_units(key):
    gpu = get_gpu(key)
    assert gpu.source.startswith("https://") and gpu.notes.strip()
    assert "[C]" in gpu.notes or "[V]" in gpu.notes or "[U]" in gpu.notes
    assert gpu.compute_capability in (86, 89, 90, 103, 120)
    if gpu.mem_bytes is not None:
        assert 1e10 < gpu.mem_bytes < 1e12 and 1e11 < gpu.mem_bw_bytes_per_s < 1e13  # GB and TB/s stored as bytes
    if gpu.dense_bf16_flops_per_s is not None:
        assert 1e13 < gpu.dense_bf16_flops_per_s < 1e16
    if gpu.nvlink_gen is None:
        assert gpu.nvlink_bw_bytes_per_s == 0 and gpu.pcie_gen in (4, 5)
    # P2P over PCIe of the workstation and data-centre Ada/Blackwell cards: no source read, so unknown
    assert gpu.pcie_p2p is None


def test_new_gpu_spot_values_from_their_sources():
    # L40S datasheet: BF16 362.05 | 733*, FP8 733 | 1,466*, 48 GB at 864 GB/s, PCIe Gen4 x16
    l40s = get_gpu("l40s")
    assert (l40s.dense_bf16_flops_per_s, l40s.dense_fp8_flops_per_s) == (362.05e12, 733e12)
    assert (l40s.mem_bytes, l40s.mem_bw_bytes_per_s, l40s.pcie_gen, l40s.compute_capability) == (48e9, 864e9, 4, 89)
    # L4: 242 FP16 and 485 FP8 'with sparsity', 24 GB at 300 GB/s
    assert get_gpu("l4").dense_fp16_flops_per_s * 2 == 242e12 and get_gpu("l4").dense_fp8_flops_per_s * 2 == 485e12
    assert (get_gpu("a10").dense_bf16_flops_per_s, get_gpu("a10").compute_capability) == (125e12, 86)
    assert get_gpu("a10g").mem_bw_bytes_per_s == get_gpu("a10").mem_bw_bytes_per_s == 600e9
    assert get_gpu("rtx_pro_6000_blackwell").mem_bytes == 96e9 and get_gpu("rtx_pro_6000_blackwell").compute_capability == 120
    assert get_gpu("h100_nvl").mem_bytes == 94e9 and get_gpu("h100_nvl").dense_bf16_flops_per_s * 2 == pytest.approx(1671e12)
    assert get_gpu("gh200").nvlink_bw_bytes_per_s == 450e9 and get_gpu("gh200").pcie_gen is None  # NVLink-C2C to Grace
    # B300: HGX 36 PF BF16 / 72 PF FP8 per 8 GPUs with sparsity; GB300 NVL72 '360 PF FP8' dense per 72 GPUs
    assert get_gpu("b300_hgx").dense_bf16_flops_per_s * 8 * 2 == pytest.approx(36e15)
    assert get_gpu("b300_gb300").dense_fp8_flops_per_s * 72 == pytest.approx(360e15)
    assert get_gpu("b300_hgx").compute_capability == get_gpu("b300_gb300").compute_capability == 103


def test_new_systems_match_their_sources():
    b300, gb300, gh200 = get_system("hgx_b300"), get_system("gb300_nvl72"), get_system("quad_gh200")
    assert (b300.num_gpus, b300.nvswitch_chips, b300.num_nics, get_network(b300.nic_key).port_bits_per_s) == (8, 2, 8, 800e9)
    assert (gb300.num_gpus, gb300.nvswitch_chips, gb300.num_nics, gb300.hosts) == (72, 18, 72, 18)
    assert (gh200.fabric, gh200.nvls, gh200.num_nics, get_network(gh200.nic_key).port_bits_per_s) == \
        ("nvlink_mesh", False, 4, 200e9)
    f = system_fabric("quad_gh200")
    assert (f.topology, f.mesh_size, f.nvls_capable) == ("mesh", 4, False)
    assert system_fabric("pcie_4x_l40s").inter_socket == "upi_sapphire_rapids"
    assert system_fabric("pcie_4x_l40s", num_ranks=2).inter_socket is None  # GPUs 0-1: one socket


@pytest.mark.parametrize("system", NEW_SYSTEMS)
@pytest.mark.parametrize("collective", list(COLLECTIVES))
def test_every_collective_runs_on_the_new_systems_and_never_gets_faster_with_size(system, collective):
    fabric = system_fabric(system)
    n = min(fabric.gpus_per_node, 16)
    times = [collective_cost(collective, size, num_ranks=n, fabric=fabric).time_s for size in SIZES]
    assert all(t > 0 for t in times)
    assert all(b >= a * (1 - 1e-9) for a, b in zip(times, times[1:])), times


@pytest.mark.parametrize("option", list(_options()))
@pytest.mark.parametrize("collective", list(COLLECTIVES))
def test_every_collective_runs_on_the_new_network_options_and_never_gets_faster_with_size(option, collective):
    fabric, n = _options()[option]
    times = [collective_cost(collective, size, num_ranks=n, fabric=fabric).time_s for size in SIZES]
    assert all(b >= a * (1 - 1e-9) for a, b in zip(times, times[1:])), times


def test_sockets_keep_nccls_network_rows_and_take_no_gpudirect_rdma():
    rdma = make_fabric("nvlink4", gpu="h100_sxm5", num_nodes=2, network="eth_100g")
    socket = rdma.replace(net_transport="socket", gdr=None)
    assert (rdma.gdr, socket.gdr) == (True, False)
    # NCCL's tuner prices NET/Socket as NET/IB: plugin latency 0 (net_socket.cc), the interface's speed
    comm_rdma, comm_socket = fabric_to_comm(rdma, 16), fabric_to_comm(socket, 16)
    assert comm_socket.graph("ring").latency_inter_s == comm_rdma.graph("ring").latency_inter_s == 0
    # without GPUDirect RDMA a GPU feeds its NIC through host memory over its PCIe 5.0 link
    assert nic_feed_bw_bytes_per_s(socket) == delivered_bw_bytes_per_s("pcie5", p2p=False)
    assert nic_feed_bw_bytes_per_s(rdma) == float("inf")
    with pytest.raises(GpucommError, match="ptrSupport"):
        make_fabric("nvlink4", num_nodes=2, network="eth_100g", net_transport="socket", gdr=True)
    with pytest.raises(GpucommError, match="plugin"):
        make_fabric("nvlink4", num_nodes=2, network="tcpxo_200g", net_transport="socket")


def test_gdr_off_is_never_faster_and_slower_where_the_host_path_is_the_bottleneck():
    on = make_fabric("nvlink4", gpu="h100_sxm5", num_nodes=2, network="ib_ndr")
    off = on.replace(gdr=False)
    for size in (8, 2**20, 2**30):
        assert collective_cost("all_reduce", size, num_ranks=16, fabric=off).time_s >= \
            collective_cost("all_reduce", size, num_ranks=16, fabric=on).time_s
    # 1 GiB: the host-staged PCIe 5.0 rate is below what the 400 Gb/s NICs take
    assert collective_cost("all_reduce", 2**30, num_ranks=16, fabric=off).time_s > \
        1.2 * collective_cost("all_reduce", 2**30, num_ranks=16, fabric=on).time_s


@pytest.mark.parametrize("kwargs,match", [
    (dict(net_transport="socket"), "single node"),
    (dict(gdr=False), "single node"),
    (dict(num_nodes=2, network="eth_100g", net_transport="tcp"), "expected one of rdma, socket"),
    (dict(num_nodes=2, network="eth_100g", gdr="no"), "expected True or False"),
])
def test_network_options_are_validated_with_one_line(kwargs, match):
    with pytest.raises(GpucommError, match=match) as err:
        make_fabric("pcie4", **kwargs)
    assert "\n" not in str(err.value)


def test_one_node_drops_the_network_options():
    f = make_fabric("pcie4", num_nodes=2, network="eth_25g", net_transport="socket").one_node()
    assert (f.num_nodes, f.network, f.net_transport, f.gdr) == (1, None, "rdma", True)
