"""``gpucomm.model.chapters.inference_2026``: every number the page glues, and its words and claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.chapters import inference_2026
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``inference_2026.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(inference_2026.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("inference_2026", values, numbers="positive")


def test_ring_steps_are_nccls_ll_nvlink_steps(values):
    """The ring's steps are priced at NCCL's tuner latency (0.6 us LL per NVLink step), not the alpha-beta fit."""
    assert values["nccl_ll_nvlink_step_us"] == nt.HW_LATENCY_US["nvlink"]["ring"][0]
    assert values["ring_steps_us"] == pytest.approx(values["ring_steps"] * values["nccl_ll_nvlink_step_us"])
    assert values["dec_one_shot_us"] < values["dec_two_shot_us"] < values["dec_nccl_us"]
    assert values["sym_vs_ring"] == ("less" if values["sym_dec_us"] < values["nccl_ring_est_us"] else "more")


def test_slow_custom_kernels_stop_the_one_shot_claim(scale_parameter):
    """The alpha-beta rounds 10x slower: one-shot no longer beats NCCL's ring, and the page stops."""
    scale_parameter(vars(cal), "LL_STEP_LATENCY_S", 10.0)
    with pytest.raises(claims.ClaimError, match="one-shot beats two-shot"):
        inference_2026.numbers()
