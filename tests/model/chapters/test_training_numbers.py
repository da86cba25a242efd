"""``gpucomm.model.chapters.training``: every number the page glues, and its words and claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import training
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``training.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(training.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("training", values, numbers="non-negative")


def test_dp_and_fsdp_volumes_follow_the_model_size_tp_the_tokens(values):
    assert values["fsdp_over_dp"] == pytest.approx(1.5)
    assert values["quiz_fsdp_gb"] == pytest.approx(values["fsdp_over_dp"] * values["quiz_dp_ring_gb"])
    assert values["tp_pc_s"] > values["pc_compute_s"] > values["dp_pc_exp_s"]


def test_slow_network_stops_the_edr_claim(scale_parameter):
    """The network at a tenth of its fitted efficiency: EDR's DP all_reduce is no longer small next to the compute."""
    training.numbers()
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError, match="EDR's DP all_reduce is still small"):
        training.numbers()


def test_fast_host_staging_stops_the_small_batch_claim(scale_parameter):
    """Host staging 4x as efficient: DP over PCIe hides even with 2048 tokens per GPU, and the page stops."""
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 4.0)
    with pytest.raises(claims.ClaimError, match="with 2048 its exposed time is no longer small"):
        training.numbers()
