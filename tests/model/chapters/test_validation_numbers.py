"""``gpucomm.model.chapters.validation``: every number ``book/validation.md`` glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import validation
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.validation import accuracy, validate


@pytest.fixture(scope="module")
def results():
    return validate()


@pytest.fixture(scope="module")
def values(results, committed_numbers):
    """``validation.numbers(results)`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(validation.numbers, results)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("validation", values)


def test_headline_is_what_gpucomm_validate_prints(values, results):
    """The page's headline is accuracy()'s first row, held out (leave-one-sweep-out), not the in-sample figure."""
    overall = accuracy(results)[0]
    assert values["acc_median_pct"] == pytest.approx(100 * overall.median_abs_error)
    assert values["acc_fit_median_pct"] == pytest.approx(100 * overall.in_sample_median_abs_error)
    assert "leave-one-sweep-out" in values["acc_how"]
    rows = validation.accuracy_rows(results)
    assert rows[0]["median error, held out"] == f"{100 * overall.median_abs_error:.1f} %"


def test_tables_cover_every_case_and_parameter(results):
    cases = validation.case_rows(results)
    assert {r["case"] for r in cases} >= set(validation.GLUED_CASES)
    assert [r for r in cases if r["note"].startswith("in sample")] == [r for r in cases if r["case"] == "C08s"]
    assert len(validation.parameter_rows()) == len(cal.all_parameters())


def test_a_recalibration_not_committed_stops_the_headline(scale_parameter):
    """A fixed (not fitted) parameter changed by half: the accuracy no longer matches the committed calibration file,
    so the page's headline would quote a stale figure, and the build stops."""
    scale_parameter(cal.LAUNCH_S, "eager", 3)
    with pytest.raises(claims.ClaimError, match="committed leave-one-sweep-out figure"):
        validation.numbers()
