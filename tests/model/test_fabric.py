"""One type for how GPUs are connected (gpucomm.model.fabric): built from a link or a catalog system, validated once."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, as_fabric, make_fabric, system_fabric
from gpucomm.model.hardware import SYSTEMS, get_gpu, get_link
from gpucomm.model.planning import TP_LIMIT, max_tp_size
from gpucomm.model.tp import tp_forward_comm, tp_step

MODELLED = [k for k, s in SYSTEMS.items() if s.fabric != "cube_mesh"]


@pytest.mark.parametrize("key", MODELLED)
def test_system_fabric_uses_the_systems_gpu_link_and_size(key):
    s = SYSTEMS[key]
    f = system_fabric(key)
    gpu = get_gpu(s.gpu_key)
    assert f.gpu == gpu.key and f.p2p == s.p2p and f.system == key and f.label == s.name
    if s.fabric == "pcie":
        assert f.link is get_link(f"pcie{gpu.pcie_gen}") and f.topology == "switch"
    else:  # the GPU's own NVLink, per direction: H800's 8 links, a bridge's
        assert f.link.kind == "nvlink" and f.link.bw_bytes_per_s == gpu.nvlink_bw_bytes_per_s
    assert (f.topology == "pairs") == (s.fabric == "pcie+bridge")
    if s.fabric == "pcie+bridge":
        assert f.pcie_link == f"pcie{gpu.pcie_gen}"
    assert f.inter_socket == (s.inter_socket if s.fabric != "nvswitch" else None)
    assert f.gpus_per_node == s.num_gpus and f.num_nodes == 1
    assert 1 <= max_tp_size(f) <= TP_LIMIT
    # every system drives a collective over all its GPUs, and over 2
    for n in (2, s.num_gpus):
        cost = collective_cost("all_reduce", 64 * 2**20, num_ranks=n, fabric=system_fabric(key, num_ranks=n))
        assert cost.time_s > 0


def test_system_fabric_refuses_a_cube_mesh():
    with pytest.raises(GpucommError, match="cube_mesh"):
        system_fabric("dgx1_v100")
    with pytest.raises(GpucommError, match="nope"):
        system_fabric("nope")


def test_bridged_pairs_cross_pcie_and_the_sockets_beyond_a_pair():
    box = system_fabric("pcie_8x_h100_bridged")
    # H100 PCIe bridge: 600 GB/s bidir over 12 NVLink 4 links, not the SXM5 part's 900 over 18
    assert box.link.bw_bytes_per_s == 300e9 and get_gpu("h100_pcie").nvlink_links == 12
    two = collective_cost("all_reduce", 2**30, num_ranks=2, fabric=system_fabric("pcie_8x_h100_bridged", num_ranks=2))
    eight = collective_cost("all_reduce", 2**30, num_ranks=8, fabric=box)
    assert eight.busbw_bytes_per_s < two.busbw_bytes_per_s / 5  # the ring leaves the pairs for PCIe and UPI
    assert "PCIe 5.0" in box.route(8) and "upi_sapphire_rapids" in box.route(8) and "no PCIe hop" in box.route(2)
    assert system_fabric("pcie_8x_h100_bridged", num_ranks=2).inter_socket is None


def test_gpus_fill_one_socket_before_the_other():
    assert system_fabric("pcie_8x_rtx4090", num_ranks=4).inter_socket is None
    assert system_fabric("pcie_8x_rtx4090", num_ranks=5).inter_socket == "upi_skylake"
    assert system_fabric("pcie_8x_rtx5090", num_ranks=16, num_nodes=2, network="eth_400g").inter_socket == "xgmi_zen5"


def test_pairs_with_a_generation_link_and_no_gpu_are_refused():
    # nvlink4 is the SXM5 part's 18 links: a bridge of H100 PCIe cards has 12
    with pytest.raises(GpucommError, match="'nvlink4' and no GPU.*h100_pcie"):
        make_fabric("nvlink4", topology="pairs")
    assert make_fabric("nvlink4", topology="pairs", gpu="h100_pcie").link.bw_bytes_per_s == 300e9
    assert make_fabric("nvlink4", gpu="h800_sxm").link.bw_bytes_per_s == 200e9  # 8 links, not 18
    assert make_fabric("nvlink4", gpu="h800_sxm").nvls_capable and not make_fabric("nvlink3", gpu="a100_sxm4_80gb").nvls_capable


def test_system_fabric_across_nodes_takes_the_systems_nics_or_a_network_given():
    f = system_fabric("dgx_h100", num_nodes=2)
    assert (f.network, f.nics_per_node, f.num_nodes) == ("ib_ndr", 8, 2)
    other = system_fabric("dgx_h100", num_nodes=2, network="eth_400g")
    assert (other.network, other.nics_per_node) == ("eth_400g", None)  # another port: one NIC per GPU
    assert system_fabric("dgx_h100", network="eth_400g").network is None  # one node: no network
    with pytest.raises(GpucommError, match="no scale-out NICs"):
        system_fabric("pcie_8x_rtx4090", num_nodes=2)


def test_a_collective_cannot_hold_more_gpus_per_node_than_the_fabric():
    with pytest.raises(GpucommError, match="at most 8"):
        collective_cost("all_reduce", 2**20, num_ranks=16, fabric=system_fabric("dgx_h100"))
    two = collective_cost("all_reduce", 2**20, num_ranks=16, fabric=system_fabric("dgx_h100", num_nodes=2))
    assert two.num_nodes == 2 and two.algorithm in ("tree", "nvls_tree", "ring")
    assert collective_cost("all_reduce", 2**20, num_ranks=72, fabric=system_fabric("gb200_nvl72")).num_nodes == 1


def test_a_link_key_is_the_plain_fabric_of_that_link():
    assert as_fabric("nvlink4") == make_fabric("nvlink4") == Fabric(get_link("nvlink4"))
    assert collective_cost("all_reduce", 2**20, num_ranks=8, fabric="nvlink4") == collective_cost(
        "all_reduce", 2**20, num_ranks=8, fabric=make_fabric("nvlink4"))
    with pytest.raises(GpucommError, match="expected a Fabric"):
        as_fabric({"link": "nvlink4"})


def test_a_bridged_card_uses_its_bridge_and_pairs_beyond_two_gpus():
    a40 = make_fabric("nvlink3", gpu="a40")
    assert a40.link.key == "a40_nvlink_bridge" and a40.replace(name="x").link == a40.link
    assert tp_forward_comm("llama-3-8b", tp_size=2, num_tokens=128, fabric=a40).per_all_reduce.link == "a40_nvlink_bridge"
    with pytest.raises(GpucommError, match="joins GPUs two by two"):
        tp_forward_comm("llama-3-8b", tp_size=4, num_tokens=128, fabric=a40)
    assert tp_forward_comm("llama-3-8b", tp_size=4, num_tokens=128, fabric=a40.replace(topology="pairs")).all_reduces_per_pass > 0
    with pytest.raises(GpucommError, match="which has NVLink 4"):
        make_fabric("nvlink3", gpu="h100_sxm5")
    with pytest.raises(GpucommError, match="which has no NVLink"):
        make_fabric("nvlink4", gpu="rtx_4090")


def test_replace_validates_again_and_one_node_drops_the_network():
    f = make_fabric("nvlink4", num_nodes=4, network="ib_ndr", nics_per_node=4)
    assert f.replace(num_nodes=8).num_nodes == 8
    assert f.one_node() == make_fabric("nvlink4")
    with pytest.raises(GpucommError, match="need a network"):
        f.replace(network=None)
    with pytest.raises(GpucommError, match="unknown fabric field"):
        f.replace(links="nvlink3")


def test_labels_say_how_the_gpus_are_connected():
    assert make_fabric("pcie4", p2p=False).label == "PCIe 4.0 x16, no P2P (via host memory)"
    assert make_fabric("pcie4", p2p=False, name="RTX 4090 box").label == "RTX 4090 box"
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8).label
    assert mesh.startswith("NVLink 4.0") and mesh.endswith("P2P mesh of 8")
    assert make_fabric("nvlink4", num_nodes=2, network="ib_ndr").label.endswith("2 nodes over ib_ndr")


def test_tp_needs_the_gpu_in_the_fabric():
    with pytest.raises(GpucommError, match="no GPU in the fabric"):
        tp_step("llama-3-8b", fabric=make_fabric("nvlink4"), tp_size=2)
    assert tp_step("llama-3-8b", fabric=system_fabric("dgx_h100"), tp_size=2).gpu == "h100_sxm5"
