"""``gpucomm.model.chapters.measuring``: every number ``book/measuring.md`` glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.measure.logs.nccl_tests import bundled_log_names, read_bundled_log
from gpucomm.model import claims
from gpucomm.model.chapters import measuring
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.validation import CASES


@pytest.fixture(scope="module")
def logs():
    """The single cases' logs, parsed as the page parses them."""
    ids = {c.case_id for c in CASES}
    return {name: read_bundled_log(name) for name in bundled_log_names() if name in ids}


@pytest.fixture(scope="module")
def values(logs, committed_numbers):
    """``measuring.numbers(logs)`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(measuring.numbers, logs)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("measuring", values)


def test_the_example_row_is_algbw_times_the_factor(values):
    assert values["ex_busbw"] == pytest.approx(values["ex_algbw"] * busbw_factor("all_reduce", values["ex_ranks"]),
                                               abs=0.02)
    assert values["f_ar_1"] == 0


def test_model_rows_cover_every_log(logs):
    rows = measuring.model_vs_log_rows(logs)
    assert [r["case"] for r in rows] == list(logs)
    assert all(r["model busbw (GB/s)"] > 0 for r in rows)


def test_a_graph_replay_slower_than_an_eager_launch_stops_the_claim(logs, scale_parameter):
    """The graph launch 20x its fitted cost: a replay no longer costs less than an eager launch."""
    scale_parameter(cal.LAUNCH_S, "graph", 20)
    with pytest.raises(claims.ClaimError, match="costs more than a graph replay"):
        measuring.numbers(logs)
