"""``gpucomm.model.chapters.profiling``: every number ``book/profiling.md`` glues, and its words follow the traces."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import profiling


def step_trace(comm: tuple[int, int], compute: tuple[int, int], step_us: int = 10_000) -> list[dict]:
    """One profiled step (Chrome trace events, us): a compute kernel and an all_reduce kernel at the given spans."""
    return [{"ph": "X", "name": "ProfilerStep#0", "ts": 0, "dur": step_us},
            {"ph": "X", "name": "gemm", "cat": "kernel", "ts": compute[0], "dur": compute[1] - compute[0]},
            {"ph": "X", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "cat": "kernel", "ts": comm[0],
             "dur": comm[1] - comm[0]}]


def lab(serial, overlapped):
    return [{"serial": serial, "overlapped": overlapped}] * 2


def page_numbers(traces) -> dict:
    return {**profiling.numbers(msg_bytes=8 * 2**20, matmuls=8, matmul_n=384, steps=3),
            **profiling.trace_numbers(traces)}


def test_numbers_give_every_key_the_page_reads(check_page_numbers):
    values = page_numbers(lab(step_trace((0, 4000), (4000, 9000)), step_trace((0, 4000), (0, 3000), 9000)))
    check_page_numbers("profiling", values)


def test_quiz_answers():
    values = profiling.numbers(msg_bytes=1, matmuls=1, matmul_n=1, steps=1)
    assert values["quiz_exposed_ms"] == pytest.approx(3)
    assert values["quiz_inspector_busbw"] == pytest.approx(values["quiz_inspector_algbw"] * 2 * 7 / 8)


def test_words_follow_the_traces():
    """Overlap that hides the all_reduce: less exposed, shorter steps; overlap that stretches it: longer."""
    serial = step_trace((0, 4000), (4000, 9000), 9000)
    hidden = page_numbers(lab(serial, step_trace((0, 4000), (0, 5000), 6000)))
    assert (hidden["exposed_word"], hidden["step_word"], hidden["comm_word"]) == ("less", "shorter", "as long")
    stretched = page_numbers(lab(serial, step_trace((0, 9500), (0, 5000), 10_000)))
    assert (stretched["exposed_word"], stretched["step_word"], stretched["comm_word"]) == ("more", "longer", "longer")


def test_a_serial_step_that_overlaps_stops_the_claim():
    overlapping = step_trace((0, 4000), (2000, 6000))
    with pytest.raises(claims.ClaimError, match="the serial variant shows no overlap"):
        profiling.trace_numbers(lab(overlapping, overlapping))
