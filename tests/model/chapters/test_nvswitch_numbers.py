"""``gpucomm.model.chapters.nvswitch``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import nvswitch
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``nvswitch.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(nvswitch.numbers)


def test_numbers_cover_the_page_and_are_finite(values, check_page_numbers):
    check_page_numbers("nvswitch", values)


def test_the_page_table_and_numbers_agree(values):
    rows = {row["system"]: row for row in nvswitch.board_table()}
    assert rows["HGX/DGX H100, H200"]["switch chips"] == values["h100_chips"]
    assert values["pair_dir"] == pytest.approx(values["nv4_dir"] / values["peers"])
    assert values["nvls_wire"] < values["ring_wire"]


def test_nvls_claim_stops_when_nvls_loses(scale_parameter):
    """NVLS at 60 % of its fitted efficiency loses to the ring at 1 GiB: the page's sentence stops."""
    nvswitch.numbers()
    scale_parameter(vars(cal), "NVLS_EFFICIENCY", 0.6)
    with pytest.raises(claims.ClaimError, match="NVLS is faster than the ring"):
        nvswitch.numbers()
