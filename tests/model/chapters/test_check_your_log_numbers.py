"""``gpucomm.model.chapters.check_your_log``: every number ``book/check_your_log.md`` glues, and its claims hold."""

from __future__ import annotations

import copy

import pytest

from gpucomm.measure.logs.nccl_info import bundled_info_log_text
from gpucomm.measure.logs.nccl_tests import bundled_log_text
from gpucomm.model import claims
from gpucomm.model.chapters import check_your_log
from gpucomm.viz.calculators.log_check import check_log


@pytest.fixture(scope="module")
def checked():
    example = check_log(bundled_log_text("C04"), system="dgx_a100")["nccl_tests"]
    info = check_log(bundled_info_log_text("nccl_892"))["nccl_info"]
    return example, info


@pytest.fixture(scope="module")
def values(checked, committed_numbers):
    """``check_your_log.numbers(*checked)`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(check_your_log.numbers, *checked)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("check_your_log", values)


def test_the_ratio_is_measured_over_model(values, checked):
    example, _ = checked
    run = example["runs"][0]
    assert values["example_ratio"] == pytest.approx(run["records"][-1]["busbw_bytes_per_s"]
                                                    / run["model"]["busbw_bytes_per_s"][-1])
    assert values["example_size"] == 8


def test_an_info_log_without_findings_stops_the_claim(checked):
    example, info = checked
    quiet = copy.deepcopy(info)
    quiet["findings"] = []
    with pytest.raises(claims.ClaimError, match="findings are listed"):
        check_your_log.numbers(example, quiet)
