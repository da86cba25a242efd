"""``gpucomm.model.chapters.nccl_algorithms``: every number ``book/nccl_algorithms.md`` glues; its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import nccl_algorithms

LOG_BYTES = 768 * 2**20
"""The all_reduce of NCCL issue #1595's TUNING line (768 MiB, 8x H100, NCCL_PROTO=Simple)."""
LOG_US = 3970.683594
"""The estimate NCCL printed for it, us (the line: ``805306368 Bytes -> Algo 1 proto 2 time 3970.683594``)."""


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``nccl_algorithms.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(nccl_algorithms.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("nccl_algorithms", values | nccl_algorithms.tuning_log_numbers(LOG_BYTES, LOG_US),
                       numbers="non-negative")


def test_latency_is_base_plus_steps_and_the_table_marks_one_pick_per_size(values):
    assert values["lat_ring_Simple"] == pytest.approx(values["base_ring_simple"] + values["nsteps"] * values["hw_nvl_ring_simple"])
    assert values["lat_ring_LL"] < values["lat_ring_LL128"] < values["lat_ring_Simple"]
    rows = nccl_algorithms.choice_rows()
    for size in ("8 KiB", "1 MiB", "64 MiB"):
        picked = [r["NCCL's estimate (us)"] for r in rows if r[size].endswith("*")]
        assert len(picked) == 1
    assert [r["NCCL's estimate (us)"] for r in rows if r["64 MiB"].endswith("*")] == [values["pick_large"]]


def test_a_wrong_printed_estimate_stops_the_page():
    nccl_algorithms.tuning_log_numbers(LOG_BYTES, LOG_US)
    with pytest.raises(claims.ClaimError, match="equals NCCL's printed float"):
        nccl_algorithms.tuning_log_numbers(LOG_BYTES, LOG_US * 1.01)


def test_nvls_without_latency_takes_the_mid_size_and_stops_the_page(nvls_without_nvlink_latency):
    """NVLS's 25 us NVLink latency set to 0: NVLS wins at 1 MiB too, and the sentence on the three picks stops."""
    with pytest.raises(claims.ClaimError, match="NCCL picks Ring/LL at 8 KiB and 1 MiB"):
        nccl_algorithms.numbers()
