"""``gpucomm.model.chapters.collectives``: every number ``book/collectives.md`` glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import collectives


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``collectives.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(collectives.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("collectives", values, numbers="non-negative")


def test_tables_and_words_agree_with_the_numbers(values):
    assert values["protocol_names"] == "LL, LL128, Simple" and values["num_protocols"] == 3
    assert "LL128 from" in values["ring_protocols"]
    assert {r["algorithm"] for r in collectives.algorithm_rows()} >= {"ring", "tree", "one_shot", "nvls"}
    assert (values["model_nvls_from"] == "2 MiB") == (values["nvls_switch_same"] == "at the same size as")
    rows = collectives.sweep_rows()
    assert max(abs(float(r["error"].split()[0])) for r in rows) <= values["sweep_max_err_pct"] + 0.5
    assert values["m13_busbw"] > values["nv4_dir"] > values["r13_busbw"]  # NVLS's busbw above the line, a ring's below


def test_cheap_nvls_latency_stops_the_small_message_ranking(nvls_without_nvlink_latency):
    """NVLS's 25 us NVLink latency set to 0: it is no longer the slowest algorithm at 64 KiB, and the page stops."""
    with pytest.raises(claims.ClaimError, match="NVLS the slowest"):
        collectives.numbers()
