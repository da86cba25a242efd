"""``gpucomm.model.chapters.nvlink``: every number ``book/nvlink.md`` glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims, nccl_tuner
from gpucomm.model.chapters import nvlink


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``nvlink.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(nvlink.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("nvlink", values, numbers="positive")


def test_per_gpu_figures_are_links_times_per_link_and_half_the_marketed_one(values):
    for gpu in ("h100", "b200"):
        assert values[f"{gpu}_dir"] == pytest.approx(values[f"{gpu}_links"] * values[f"{gpu}_link"])
        assert values[f"{gpu}_bidir"] == pytest.approx(2 * values[f"{gpu}_dir"])
    assert values["effbw_nv4"] < values["h100_dir"]
    assert all(r["per GPU, per direction (GB/s)"] > 0 for r in nvlink.generation_rows())
    assert nvlink.bridged_rows(), "the catalog has bridged PCIe cards"


def test_nccl_planning_above_line_rate_stops_the_page(monkeypatch):
    """NCCL's per-link figure for NVLink 4.0 set above the line rate: 'NCCL plans with less' must stop the page."""
    raised = {**nccl_tuner.NVLINK_BW_GBPS, 90: 2 * nvlink.numbers()["h100_link"]}
    monkeypatch.setattr(nvlink, "NVLINK_BW_GBPS", raised)
    with pytest.raises(claims.ClaimError, match="NCCL plans with less than the line rate per link"):
        nvlink.numbers()
