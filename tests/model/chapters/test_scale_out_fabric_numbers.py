"""``gpucomm.model.chapters.scale_out_fabric``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import scale_out_fabric
from gpucomm.model.hardware import calibration as cal


def test_numbers_cover_the_page_and_are_finite(check_page_numbers):
    # the two log counts are read by gpucomm.measure in the page itself
    check_page_numbers("scale_out_fabric", scale_out_fabric.numbers(), glued_by_page={"l1412_ib", "l1453_gdr"})


def test_oversubscription_numbers_are_consistent():
    v = scale_out_fabric.numbers()
    assert v["rail_nodes"] == v["leaf_ports"] // 2 and v["tor_nodes"] * v["nics"] == v["leaf_ports"] // 2
    assert v["gpu_net_2"] == pytest.approx(v["ndr_gbps"] * v["share_2"])
    assert v["os1_busbw"] > v["os2_busbw"] > v["os4_busbw"]


def test_a_fast_network_stops_the_one_for_one_claim(scale_parameter):
    """NICs ten times as efficient: NVLink, not the network, sets the time, and a 2:1 leaf no longer costs 2x."""
    scale_out_fabric.numbers()
    scale_parameter(vars(cal), "NET_EFFICIENCY", 10.0)
    with pytest.raises(claims.ClaimError, match="loses the ratio almost one for one"):
        scale_out_fabric.numbers()
