"""``gpucomm.model.chapters.rack_scale``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import rack_scale
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``rack_scale.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(rack_scale.numbers)


def test_numbers_cover_the_page_and_are_finite(values, check_page_numbers):
    check_page_numbers("rack_scale", values)


def test_two_nodes_lose_less_than_a_ring_and_far_less_than_the_nic_ratio(values):
    assert values["ratio16_4g"] < values["ring16_4g_ratio"] < values["gb200_nvl72_ratio"]
    assert values["nvl_switch_ports"] == values["nvl_gpu_links"] == values["nvl_gpus"] * values["nvl_links_per_gpu"]


def test_a_slow_network_stops_the_nic_ratio_claim(scale_parameter):
    """The network at a tenth of its efficiency: two nodes now lose more than the NIC ratio, and the page stops."""
    rack_scale.numbers()
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError, match="two nodes lose less than the NIC ratio"):
        rack_scale.numbers()
