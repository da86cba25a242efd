"""``gpucomm.model.chapters.why_communication``: every number the page glues, and its words follow the model."""

from __future__ import annotations

import dataclasses

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import why_communication
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``why_communication.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(why_communication.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("why_communication", values, numbers="positive")


def test_the_word_agrees_with_the_speedup(values):
    assert values["sp_pre_nop2p_word"] == ("slower than one GPU" if values["sp_pre_nop2p"] < 1
                                           else "still faster than one GPU")
    assert values["gap_pcie5"] == pytest.approx(values["grow_compute"] / values["grow_pcie5"])


def test_efficient_staging_flips_the_word_and_stops_quiz_4(monkeypatch, scale_parameter):
    """Host staging 8x as efficient: TP=8 prefill without P2P beats one GPU, the word follows and quiz 4's claim stops."""
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 8)
    with pytest.raises(claims.ClaimError, match="quiz 4"):
        why_communication.numbers()
    broken: list = []
    monkeypatch.setattr(claims, "require", lambda ok, claim: None if ok else broken.append(claim))
    values = why_communication.numbers()
    assert values["sp_pre_nop2p"] > 1 and values["sp_pre_nop2p_word"] == "still faster than one GPU"


def test_quiz_1_reads_the_fitted_pcie_share_and_needs_it_below_half(values):
    """Quiz 1 explains its 'well over twice' with the fitted P2P share of the page's model."""
    assert values["pcie_p2p_eff"] == pytest.approx(100 * cal.PCIE_P2P_EFFICIENCY.value)


def test_efficient_pcie_p2p_stops_quiz_1(monkeypatch, fresh_model):
    """With P2P at 90 % a ring takes about 2.3x the '64 GB/s' estimate, not 'well over twice': the claim stops."""
    monkeypatch.setitem(vars(cal), "PCIE_P2P_EFFICIENCY", dataclasses.replace(cal.PCIE_P2P_EFFICIENCY, value=0.9))
    with pytest.raises(claims.ClaimError, match="quiz 1"):
        why_communication.numbers()
