"""``gpucomm.model.chapters.scale_out_fabric``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import scale_out_fabric
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``scale_out_fabric.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(scale_out_fabric.numbers)


def test_numbers_cover_the_page_and_are_finite(values, check_page_numbers):
    # the two log counts are read by gpucomm.measure in the page itself
    check_page_numbers("scale_out_fabric", values, glued_by_page={"l1412_ib", "l1453_gdr"})


def test_oversubscription_numbers_are_consistent(values):
    assert values["rail_nodes"] == values["leaf_ports"] // 2 and values["tor_nodes"] * values["nics"] == values["leaf_ports"] // 2
    assert values["gpu_net_2"] == pytest.approx(values["ndr_gbps"] * values["share_2"])
    assert values["os1_busbw"] > values["os2_busbw"] > values["os4_busbw"]


def test_a_fast_network_stops_the_one_for_one_claim(scale_parameter):
    """NICs ten times as efficient: NVLink, not the network, sets the time, and a 2:1 leaf no longer costs 2x."""
    scale_out_fabric.numbers()
    scale_parameter(vars(cal), "NET_EFFICIENCY", 10.0)
    with pytest.raises(claims.ClaimError, match="loses the ratio almost one for one"):
        scale_out_fabric.numbers()
