"""``gpucomm.model.chapters.debugging``: every number ``book/debugging.md`` glues, and its claims follow the logs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpucomm.measure.logs.nccl_info import bundled_info_log_names, read_bundled_info_log
from gpucomm.model import claims
from gpucomm.model.chapters import debugging


@pytest.fixture(scope="module")
def logs():
    return {name: read_bundled_info_log(name) for name in bundled_info_log_names()}


@pytest.fixture(scope="module")
def values(logs, committed_numbers):
    """``debugging.numbers(logs)`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(debugging.numbers, logs)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("debugging", values)


def test_the_ib_error_comes_after_retry_count_tries(values):
    assert values["ib_error_s"] == pytest.approx(values["ib_retry_default"] * values["ib_ack_s"])
    assert values["l928_status"] == 4 and values["l928_hosts"] > 1


def test_a_log_with_gpudirect_rdma_stops_the_claim(logs):
    """Issue #1412's log with nothing flagged: the page's 'NET/IB without /GDRDMA, flagged' no longer holds."""
    gdr = logs["nccl_1412"]
    fixed = SimpleNamespace(transports=gdr.transports, findings=[], num_ranks=gdr.num_ranks, warnings=[], hosts=())
    with pytest.raises(claims.ClaimError, match="without /GDRDMA"):
        debugging.numbers({**logs, "nccl_1412": fixed})
