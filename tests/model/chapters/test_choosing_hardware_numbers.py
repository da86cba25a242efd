"""``gpucomm.model.chapters.choosing_hardware``: every number the page glues, and its words follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import choosing_hardware
from gpucomm.model.hardware import calibration as cal


def test_numbers_give_every_key_the_page_reads(check_page_numbers):
    check_page_numbers("choosing_hardware", choosing_hardware.numbers(), numbers="non-negative")


def test_prefill_word_follows_the_speedup(monkeypatch, scale_parameter):
    """Host staging three times as efficient (or a third): the two-card prefill sentence changes its word."""
    base = choosing_hardware.numbers()
    assert base["r4_pre_word"] == ("gets slower" if base["r4_pre_speedup"] < 1 else "gets faster too")
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 3.0 if base["r4_pre_speedup"] < 1 else 1 / 3)
    monkeypatch.setattr(claims, "require", lambda ok, claim: None)
    flipped = choosing_hardware.numbers()
    assert flipped["r4_pre_word"] != base["r4_pre_word"]
    assert flipped["r4_pre_word"] == ("gets slower" if flipped["r4_pre_speedup"] < 1 else "gets faster too")


def test_slow_nvlink_stops_the_batch_1_sentence(scale_parameter):
    """NVLink 4.0's ring at a tenth of its fitted efficiency: the DGX's decode all_reduces no longer cost about what the
    RTX 4090 box's do, and the page refuses to say so."""
    scale_parameter(cal.RING_EFFICIENCY, "nvlink4", 0.1)
    with pytest.raises(claims.ClaimError, match="the all_reduce time is about the same"):
        choosing_hardware.numbers()
