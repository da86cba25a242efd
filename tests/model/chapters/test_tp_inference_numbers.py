"""``gpucomm.model.chapters.tp_inference``: every number the page glues, and its words and claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.chapters import tp_inference
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``tp_inference.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(tp_inference.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("tp_inference", values, numbers="positive")


def test_decode_latency_is_nccls_tuner_not_the_alpha_beta_fit(values):
    """The ring/LL decode latency is NCCL's base + 14 x 0.6 us per NVLink step, not the ~2 us host-inflated fit."""
    assert values["nccl_ll_nvlink_step_us"] == nt.HW_LATENCY_US["nvlink"]["ring"][0]
    assert values["ar_dec_nccl_lat_us"] == pytest.approx(values["nccl_ll_base_us"] + values["nccl_ll_ring_steps_us"])
    assert values["nccl_ll_nvlink_step_us"] < values["ab_step_us"]
    assert values["ar_dec_alpha_pct"] > 99 > values["ar_pre_alpha_pct"]


def test_tp8_word_follows_the_speedups(values):
    word = values["s8_tp8_vs_tp4"]
    assert word.endswith("faster" if values["s8_h100_tp8"] > values["s8_h100_tp4"] else "slower"), word
    assert values["s8_per_gpu_tp8"] == pytest.approx(values["s8_h100_tp8"] / 8)


def test_slow_nvlink_steps_flip_the_tp8_word(monkeypatch, scale_parameter):
    """NVLink's tuner latency 20x: TP=8 (14 ring steps) loses to TP=4 (6); the phrase says 'slower'."""
    base = tp_inference.numbers()["s8_tp8_vs_tp4"]
    scale_parameter(cal.TUNER_LATENCY_SCALE, "nvlink4", 20.0 if base.endswith("faster") else 0.05)
    monkeypatch.setattr(claims, "require", lambda ok, claim: None)
    values = tp_inference.numbers()
    assert values["s8_tp8_vs_tp4"].split()[-1] != base.split()[-1]
    assert values["s8_tp8_vs_tp4"].endswith("faster" if values["s8_h100_tp8"] > values["s8_h100_tp4"] else "slower")


def test_poor_host_staging_stops_the_prefill_ranking(scale_parameter):
    """Host staging at half its efficiency: the RTX 4090s no longer gain more than the H100 PCIe cards."""
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 0.5)
    with pytest.raises(claims.ClaimError, match="gain less than the RTX 4090s"):
        tp_inference.numbers()
