"""How long failures take to surface (``gpucomm.model.failure_timing``): NCCL's documented IB table, the watchdog."""

from __future__ import annotations

import math

import pytest

from gpucomm import GpucommError
from gpucomm.model.failure_timing import (
    FAILURE_CAUSES,
    IB_RETRY_CNT_DEFAULT,
    IB_TIMEOUT_DEFAULT,
    PG_NCCL_TIMEOUT_DEFAULT_S,
    failure_surfaces,
    ib_ack_timeout_s,
    ib_error_after_s,
)

# NCCL's own table (docs/userguide/source/env.rst at v2.30.7-1, NCCL_IB_TIMEOUT), retry count 7:
# NCCL_IB_TIMEOUT -> (timeout, total time before error), both in seconds, as printed (rounded).
NCCL_DOC_TABLE = {17: (0.5369, 3.8), 18: (1.1, 7.5), 19: (2.1, 15), 20: (4.3, 30), 21: (8.6, 60), 22: (17.2, 120),
                  23: (34.4, 240), 24: (66, 480), 25: (138, 960)}


@pytest.mark.parametrize("ib_timeout", sorted(NCCL_DOC_TABLE))
def test_reproduces_nccls_documented_table(ib_timeout):
    per_try, total = NCCL_DOC_TABLE[ib_timeout]
    assert ib_ack_timeout_s(ib_timeout) == pytest.approx(per_try, rel=0.05)
    assert ib_error_after_s(ib_timeout, 7) == pytest.approx(total, rel=0.05)


def test_defaults_are_nccls_and_give_about_thirty_seconds():
    assert (IB_TIMEOUT_DEFAULT, IB_RETRY_CNT_DEFAULT) == (20, 7)
    assert ib_ack_timeout_s() == 4.096e-6 * 2**20
    assert ib_error_after_s() == pytest.approx(30.06, abs=0.01)   # NCCL's hint: "~30 seconds before error"
    assert ib_error_after_s(count_first_wait=True) == pytest.approx(34.36, abs=0.01)


def test_each_step_doubles_and_retries_scale_linearly():
    assert ib_ack_timeout_s(21) == 2 * ib_ack_timeout_s(20)
    assert ib_error_after_s(20, 3) == pytest.approx(3 / 7 * ib_error_after_s(20, 7))
    assert ib_error_after_s(20, 0) == 0.0
    assert ib_error_after_s(20, 0, count_first_wait=True) == ib_ack_timeout_s(20)


def test_zero_timeout_is_infinite():
    assert math.isinf(ib_ack_timeout_s(0)) and math.isinf(ib_error_after_s(0, 7))
    assert failure_surfaces("dead_link", ib_timeout=0) == (600.0, "torch_watchdog_timeout")


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(ib_timeout=32), r"ib_timeout \(NCCL_IB_TIMEOUT\) must be an integer from 0 to 31, got 32"),
    (dict(ib_timeout=-1), "from 0 to 31, got -1"),
    (dict(ib_timeout=20.0), "from 0 to 31, got 20.0"),
    (dict(ib_timeout=True), "from 0 to 31, got True"),
    (dict(retry_cnt=8), r"retry_cnt \(NCCL_IB_RETRY_CNT\) must be an integer from 0 to 7, got 8"),
])
def test_out_of_range_settings_name_the_value_and_the_range(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ib_error_after_s(**kwargs)
    with pytest.raises(GpucommError, match=message):
        failure_surfaces("dead_link", **kwargs)


def test_missing_rank_waits_for_the_watchdog_and_a_dead_link_for_nccl():
    assert failure_surfaces("missing_rank") == (PG_NCCL_TIMEOUT_DEFAULT_S, "torch_watchdog_timeout")
    assert failure_surfaces("missing_rank", pg_timeout_s=120) == (120.0, "torch_watchdog_timeout")
    dead = failure_surfaces("dead_link")
    assert dead.reported_by == "nccl_ib_retry_exceeded" and dead.time_s == ib_error_after_s()
    assert dead.time_s < failure_surfaces("missing_rank").time_s


def test_a_timeout_shorter_than_the_ib_retries_hides_the_network_error():
    assert failure_surfaces("dead_link", pg_timeout_s=20) == (20.0, "torch_watchdog_timeout")
    assert failure_surfaces("dead_link", pg_timeout_s=60, ib_timeout=22).reported_by == "torch_watchdog_timeout"
    assert failure_surfaces("dead_link", pg_timeout_s=60, ib_timeout=19).reported_by == "nccl_ib_retry_exceeded"


@pytest.mark.parametrize("bad", [0, -5, math.inf, math.nan, "600", True])
def test_bad_pg_timeout_is_refused(bad):
    with pytest.raises(ValueError, match="pg_timeout_s must be a positive finite number of seconds"):
        failure_surfaces("missing_rank", pg_timeout_s=bad)


def test_unknown_cause_lists_the_accepted_ones():
    assert FAILURE_CAUSES == ("missing_rank", "dead_link")
    with pytest.raises(ValueError, match="cause must be one of missing_rank, dead_link, got 'gpu_fell_off'"):
        failure_surfaces("gpu_fell_off")


def test_a_timeout_equal_to_the_retry_window_counts_as_the_watchdogs():
    # failure_surfaces says NCCL first only when its error comes strictly before the timeout.
    window_s = ib_error_after_s()
    assert failure_surfaces("dead_link", pg_timeout_s=window_s).reported_by == "torch_watchdog_timeout"
    assert failure_surfaces("dead_link", pg_timeout_s=window_s * 1.001).reported_by == "nccl_ib_retry_exceeded"


def test_the_retry_settings_do_not_change_when_a_missing_rank_surfaces():
    for ib_timeout, retry_cnt in ((14, 0), (20, 7), (31, 7)):
        assert failure_surfaces("missing_rank", ib_timeout=ib_timeout, retry_cnt=retry_cnt) == (
            PG_NCCL_TIMEOUT_DEFAULT_S, "torch_watchdog_timeout")


def test_counting_the_first_wait_adds_exactly_one_timeout():
    for ib_timeout in (14, 18, 20, 23):
        for retry_cnt in (0, 3, 7):
            assert ib_error_after_s(ib_timeout, retry_cnt, count_first_wait=True) == pytest.approx(
                ib_error_after_s(ib_timeout, retry_cnt) + ib_ack_timeout_s(ib_timeout))
    assert math.isinf(ib_error_after_s(0, 7, count_first_wait=True))
