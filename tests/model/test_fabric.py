"""One type for how GPUs are connected (gpucomm.model.fabric): built from a link or a catalog system, validated once."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, as_fabric, make_fabric, system_fabric
from gpucomm.model.hardware import SYSTEMS, get_gpu, get_link
from gpucomm.model.planning import TP_LIMIT, max_tp_size
from gpucomm.model.tp import tp_forward_comm, tp_step

ALL_TO_ALL = [k for k, s in SYSTEMS.items() if s.fabric in ("nvswitch", "pcie")]


@pytest.mark.parametrize("key", ALL_TO_ALL)
def test_system_fabric_uses_the_systems_gpu_link_and_size(key):
    s = SYSTEMS[key]
    f = system_fabric(key)
    gpu = get_gpu(s.gpu_key)
    assert f.gpu == gpu.key and f.p2p == s.p2p and f.system == key and f.label == s.name
    expected = f"nvlink{gpu.nvlink_gen}" if s.fabric == "nvswitch" else f"pcie{gpu.pcie_gen}"
    assert f.link is get_link(expected) and f.gpus_per_node == s.num_gpus and f.num_nodes == 1
    assert 1 <= max_tp_size(f) <= TP_LIMIT


def test_system_fabric_refuses_fabrics_that_are_not_all_to_all():
    with pytest.raises(GpucommError, match="cube_mesh"):
        system_fabric("dgx1_v100")
    with pytest.raises(GpucommError, match="nope"):
        system_fabric("nope")


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
