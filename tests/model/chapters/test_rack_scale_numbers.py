"""``gpucomm.model.chapters.rack_scale``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import rack_scale
from gpucomm.model.hardware import calibration as cal


def test_numbers_cover_the_page_and_are_finite(check_page_numbers):
    check_page_numbers("rack_scale", rack_scale.numbers())


def test_two_nodes_lose_less_than_a_ring_and_far_less_than_the_nic_ratio():
    v = rack_scale.numbers()
    assert v["ratio16_4g"] < v["ring16_4g_ratio"] < v["gb200_nvl72_ratio"]
    assert v["nvl_switch_ports"] == v["nvl_gpu_links"] == v["nvl_gpus"] * v["nvl_links_per_gpu"]


def test_a_slow_network_stops_the_nic_ratio_claim(scale_parameter):
    """The network at a tenth of its efficiency: two nodes now lose more than the NIC ratio, and the page stops."""
    rack_scale.numbers()
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError, match="two nodes lose less than the NIC ratio"):
        rack_scale.numbers()
