"""``gpucomm.model.chapters.llama70b_tp4``: every number the page glues, and its words and claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import llama70b_tp4
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``llama70b_tp4.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(llama70b_tp4.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("llama70b_tp4", values)


def test_quiz_2_compares_like_with_like(values):
    """Network vs NVLink step latency, LL with LL and Simple with Simple, both from NCCL's ring row of hwLat."""
    assert (values["net_step_ll_us"], values["nvl_step_ll_us"]) == (2.7, 0.6)
    assert (values["net_step_simple_us"], values["nvl_step_simple_us"]) == (14.0, 3.4)
    assert values["bf_8_vs_4_pct"] == pytest.approx(100 * (values["bf_8"] / values["bf_4"] - 1))


def test_summed_bandwidth_is_four_times_the_bus_bytes(values):
    assert values["summed_mib"] == pytest.approx(values["tp"] * values["bus_mib"])
    assert values["meas_busbw_gbps"] < values["nvlink3_gbps"] < values["summed_bw_gbps"]


def test_the_word_follows_the_model_against_the_measurement(monkeypatch, scale_parameter):
    """NVLink 3.0 delivering 60 % of its fitted ring efficiency: the model's time is now long, and the word says so."""
    base = llama70b_tp4.numbers()
    assert base["nv_fast_or_slow"] == ("long" if base["err_nv_pct"] > 0 else "short")
    scale_parameter(cal.RING_EFFICIENCY, "nvlink3", 0.6)
    monkeypatch.setattr(claims, "require", lambda ok, claim: None)
    values = llama70b_tp4.numbers()
    assert values["err_nv_pct"] > 0 and values["nv_fast_or_slow"] == "long"


def test_slow_staging_stops_the_vllm_claim(scale_parameter):
    """Host staging at 70 % of its efficiency: the model's PCIe gap overshoots what vLLM measured, and the page stops."""
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 0.7)
    with pytest.raises(claims.ClaimError, match="most of the slowdown vLLM measures"):
        llama70b_tp4.numbers()
