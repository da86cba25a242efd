"""``gpucomm.model.chapters.moe_all_to_all``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import moe_all_to_all
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``moe_all_to_all.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(moe_all_to_all.numbers)


def test_numbers_cover_the_page_and_are_finite(values, check_page_numbers):
    check_page_numbers("moe_all_to_all", values)


def test_deepep_comparison_is_split_into_the_model_terms(values):
    """The model's decode dispatch = transfer + fixed term (+ launch); DeepEP sits between line rate and the model."""
    assert values["ll_model_dus"] == pytest.approx(values["ll_model_xfer_us"] + values["ll_model_lat_us"], abs=10)
    assert values["ll_line_us"] < values["dep_low_latency_64_dus"] < values["ll_model_dus"]
    assert values["ll_xfer_vs_dep"].endswith("less" if values["ll_model_xfer_us"] < values["dep_low_latency_64_dus"] else "more")


def test_a_slower_network_flips_the_word_and_stops_the_page(monkeypatch, scale_parameter):
    """The network at 40 % of its efficiency: the model's transfer term alone now exceeds DeepEP's time; the phrase says
    'more' and the claim that the transfer term is within 30 % of DeepEP stops the page."""
    base = moe_all_to_all.numbers()["ll_xfer_vs_dep"]
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.4)
    with pytest.raises(claims.ClaimError):
        moe_all_to_all.numbers()
    broken: list = []
    monkeypatch.setattr(claims, "require", lambda ok, claim: None if ok else broken.append(claim))
    flipped = moe_all_to_all.numbers()["ll_xfer_vs_dep"]
    assert any("transfer term alone is within 30 %" in claim for claim in broken), broken
    assert base.endswith("less") and flipped.endswith("more"), (base, flipped)
