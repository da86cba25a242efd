"""``gpucomm.model.chapters.small_messages``: every number ``book/small_messages.md`` glues; its claims follow the model."""

from __future__ import annotations

import dataclasses

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import small_messages
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``small_messages.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(small_messages.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("small_messages", values, numbers="non-negative")


def test_sixteen_kib_is_launch_plus_latency_and_the_tables_agree(values):
    assert values["e16_us"] == pytest.approx(values["e16_launch_us"] + values["e16_lat_us"], abs=0.05)  # LL hides the transfer
    assert values["g16_us"] < values["e16_us"] and values["o16_us"] < values["g16_us"]
    row = next(r for r in small_messages.size_rows() if r["size"] == "16 KiB")
    assert row["eager (us)"] == pytest.approx(values["e16_us"]) and row["NCCL's pick"] == values["e16_pick"]
    quiz = small_messages.quiz_rows()
    assert quiz[-1]["busbw (GB/s)"] == pytest.approx(values["quiz_busbw_64k"])


def test_slow_custom_kernel_steps_stop_the_vllm_sentence(scale_parameter):
    """Custom kernels' steps 20x as slow: their lines no longer cross where vLLM switches."""
    small_messages.numbers()
    scale_parameter(vars(cal), "LL_STEP_LATENCY_S", 20.0)
    with pytest.raises(claims.ClaimError, match="cross about where vLLM switches"):
        small_messages.numbers()


def test_a_slow_graph_launch_stops_the_cuda_graph_sentence(monkeypatch, fresh_model):
    """A graph launch as slow as 30 eager ones: a CUDA graph no longer saves anything, and the sentence stops."""
    monkeypatch.setitem(cal.LAUNCH_S, "graph", dataclasses.replace(cal.LAUNCH_S["graph"],
                                                                   value=30 * cal.LAUNCH_S["eager"].value))
    with pytest.raises(claims.ClaimError, match="a CUDA graph saves the launch"):
        small_messages.numbers()
