"""``gpucomm.model.chapters.failures``: every number ``book/failures.md`` glues, and its words follow the model."""

from __future__ import annotations

import functools

import pytest

from gpucomm.model import claims, failure_timing
from gpucomm.model.chapters import failures

PAGE_KEYS = {"bsr_ranks", "bsr_seq", "bsr_timeout_s", "bsr_enqueued", "bsr_completed"}
"""Keys the page glues itself: they read the quoted log with the parsers of gpucomm.measure."""


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``failures.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(failures.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("failures", values, glued_by_page=PAGE_KEYS, numbers="positive")


def test_the_table_doubles_per_step_and_the_word_follows_the_times(values):
    assert values["quiz_ib22_ratio"] == pytest.approx(4)
    assert values["dead_vs_missing"] == ("sooner" if values["missing_over_dead"] > 1 else "later")


def test_a_long_ib_timeout_stops_the_page(monkeypatch):
    """NCCL_IB_TIMEOUT=27 (about 16 min before status 12): PyTorch's 10-minute watchdog now reports a dead link first,
    and the page refuses to say that NCCL does."""
    monkeypatch.setattr(failures, "failure_surfaces", functools.partial(failure_timing.failure_surfaces, ib_timeout=27))
    with pytest.raises(claims.ClaimError, match="NCCL reports a dead link before the watchdog's timeout"):
        failures.numbers()
