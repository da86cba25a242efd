"""``gpucomm.model.chapters.myths``: every number ``book/myths.md`` glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import myths
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``myths.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(myths.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("myths", values, numbers="non-negative")


def test_direction_link_and_gpu_figures_agree(values):
    assert values["h100_gpu_gbps"] == pytest.approx(values["h100_links"] * values["h100_link_gbps"])
    assert values["h100_gpu_bidir"] == pytest.approx(2 * values["h100_gpu_gbps"])
    assert values["pcie5_dir"] < values["pcie5_bidir_after"] / 2 * 1.0001 < values["pcie5_bidir"] / 2  # the line code, then the halving
    assert values["s8_eff_8"] == pytest.approx(values["s8_dec_8"] / 8)


def test_fast_host_staging_stops_the_rtx_4090_sentence(monkeypatch, scale_parameter):
    """Host staging 8x as efficient: two RTX 4090s without P2P now gain from TP=2 prefill, and the page stops."""
    myths.numbers()
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 8.0)
    broken: list = []
    monkeypatch.setattr(claims, "require", lambda ok, claim: None if ok else broken.append(claim))
    v = myths.numbers()
    assert "TP=2 prefill on two RTX 4090s without P2P buys nothing over one card" in broken
    assert v["s8_4090_pre_word"] == claims.compare_word(v["s8_4090_pre"], 1.0, higher="faster than",
                                                        lower="slower than", same="no faster than", rel_tol=0.05)
