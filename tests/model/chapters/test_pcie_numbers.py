"""``gpucomm.model.chapters.pcie``: every number ``book/pcie.md`` glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import pcie
from gpucomm.model.hardware import calibration as cal

PAGE_KEYS = {"dgx1_gpus", "dgx1_nv_pairs", "dgx1_soc_pairs", "nv1_links_gpu0", "dgx1_gpu0_nv", "dgx1_gpu0_pix",
             "dgx1_gpu0_phb", "dgx1_gpu0_soc_gpus"}
"""Keys the page glues itself: they read the topology parser of gpucomm.measure."""


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``pcie.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(pcie.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("pcie", values, glued_by_page=PAGE_KEYS, numbers="non-negative")


def test_per_direction_is_half_the_marketed_figure_after_the_line_code(values):
    assert values["g5_bidir_after"] == pytest.approx(2 * values["g5_x16"])
    assert values["g5_x16"] < values["g5_bidir"] / 2  # PCI-SIG counts raw bits before 128b/130b
    rows = pcie.generation_rows()
    assert [r["x16, per direction (GB/s)"] for r in rows] == sorted(r["x16, per direction (GB/s)"] for r in rows)


def test_p2p_beats_staging_on_every_generation():
    for gen in pcie.RING_GENS:
        assert pcie.ring_busbw_gbps(gen, p2p=True) > pcie.ring_busbw_gbps(gen, p2p=False)


def test_staging_as_good_as_p2p_stops_the_claim(scale_parameter):
    """Host staging 1.8x as efficient: P2P no longer gets about twice what staging does."""
    pcie.numbers()
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 1.8)
    with pytest.raises(claims.ClaimError, match="P2P gets about twice what staging does"):
        pcie.numbers()
