"""Leaf-spine networks (gpucomm.model.fat_tree): oversubscription share, rail leaves, the oversubscribed fabric."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.fat_tree import nodes_per_leaf, oversubscribed_fabric, spine_share


@pytest.mark.parametrize("k,f,share", [(1, 1.0, 1.0), (2, 1.0, 0.5), (5, 1.0, 0.2), (4, 0.5, 0.5), (2, 0.25, 1.0),
                                       (8, 0.0, 1.0)])
def test_spine_share_is_the_up_ports_over_the_traffic_that_needs_them(k, f, share):
    # Al-Fares et al.: at 5:1 only 20% of host bandwidth is left for some patterns
    assert spine_share(k, cross_leaf_fraction=f) == pytest.approx(share)


@pytest.mark.parametrize("bad", [0, 0.5, 65, float("nan"), "2", True])
def test_spine_share_refuses_bad_ratios(bad):
    with pytest.raises(GpucommError, match="oversubscription"):
        spine_share(bad)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "all"])
def test_spine_share_refuses_bad_fractions(bad):
    with pytest.raises(GpucommError, match="cross-leaf fraction"):
        spine_share(2, cross_leaf_fraction=bad)


def test_rail_leaves_hold_one_port_per_node_and_tor_leaves_a_whole_node():
    assert nodes_per_leaf(64, 8, rail_optimized=True) == 32       # DGX SuperPOD-style scalable unit
    assert nodes_per_leaf(64, 8, rail_optimized=False) == 4
    assert nodes_per_leaf(64, 8, rail_optimized=True, oversubscription=3) == 48
    assert nodes_per_leaf(40, 1, rail_optimized=False) == 20
    with pytest.raises(GpucommError, match="cannot hold"):
        nodes_per_leaf(8, 8, rail_optimized=False)
    with pytest.raises(GpucommError, match="leaf ports"):
        nodes_per_leaf(1, 8, rail_optimized=True)
    with pytest.raises(GpucommError, match="rail_optimized"):
        nodes_per_leaf(64, 8, rail_optimized="yes")


def test_oversubscribed_fabric_halves_the_nodes_nics_and_the_model_prices_it():
    base = system_fabric("dgx_h100", num_nodes=4)
    half = oversubscribed_fabric(base, 2)
    assert half.nics_per_node == 4 and "2:1 leaf" in half.label and half.network == base.network
    assert oversubscribed_fabric(base, 1).nics_per_node == 8
    assert oversubscribed_fabric(base, 2, cross_leaf_fraction=0.5).nics_per_node == 8
    full, cut = (collective_cost("all_reduce", 2**30, num_ranks=32, fabric=f).busbw_bytes_per_s for f in (base, half))
    assert 0.4 < cut / full < 0.6  # network-bound across 4 nodes: about half
    # one NIC per GPU given by GPUs per node, when the fabric names no NIC count
    assert oversubscribed_fabric(make_fabric("nvlink4", num_nodes=2, network="ib_ndr", gpus_per_node=8), 4).nics_per_node == 2


def test_oversubscribed_fabric_refuses_what_it_cannot_express():
    base = system_fabric("dgx_h100", num_nodes=2)
    with pytest.raises(GpucommError, match="whole number"):
        oversubscribed_fabric(base, 3)
    with pytest.raises(GpucommError, match="2 or more"):
        oversubscribed_fabric(system_fabric("dgx_h100"), 2)
    with pytest.raises(GpucommError, match="neither"):
        oversubscribed_fabric(make_fabric("nvlink4", num_nodes=2, network="ib_ndr"), 2)
