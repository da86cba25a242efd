"""``gpucomm.model.chapters.inference_2026``: every number the page glues, and its words and claims follow the model."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path

import pytest

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.chapters import inference_2026
from gpucomm.model.hardware import calibration as cal

PAGE = Path(__file__).resolve().parents[3] / "book" / "inference_2026.md"
REF = re.compile(r"\{glue(?::[a-z]+)?\}`([^`:]+)(?::[^`]*)?`")
ANSWER = re.compile(r"^:answer:\s*(\S+)", re.M)


def clear_model_caches() -> None:
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("gpucomm.model"):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


@pytest.fixture
def fresh_model():
    clear_model_caches()
    yield
    clear_model_caches()


def scale(monkeypatch, table: dict, key: str, factor: float) -> None:
    monkeypatch.setitem(table, key, dataclasses.replace(table[key], value=table[key].value * factor))
    clear_model_caches()


def test_numbers_give_every_key_the_page_reads():
    text = PAGE.read_text(encoding="utf-8")
    refs = set(REF.findall(text)) | set(ANSWER.findall(text))
    values = inference_2026.numbers()
    assert refs <= set(values), sorted(refs - set(values))
    for key, value in values.items():
        if isinstance(value, (int, float)):
            assert math.isfinite(value) and value > 0, (key, value)


def test_ring_steps_are_nccls_ll_nvlink_steps():
    """The ring's steps are priced at NCCL's tuner latency (0.6 us LL per NVLink step), not the alpha-beta fit."""
    values = inference_2026.numbers()
    assert values["nccl_ll_nvlink_step_us"] == nt.HW_LATENCY_US["nvlink"]["ring"][0]
    assert values["ring_steps_us"] == pytest.approx(values["ring_steps"] * values["nccl_ll_nvlink_step_us"])
    assert values["dec_one_shot_us"] < values["dec_two_shot_us"] < values["dec_nccl_us"]
    assert values["sym_vs_ring"] == ("less" if values["sym_dec_us"] < values["nccl_ring_est_us"] else "more")


def test_slow_custom_kernels_stop_the_one_shot_claim(monkeypatch, fresh_model):
    """The alpha-beta rounds 10x slower: one-shot no longer beats NCCL's ring, and the page stops."""
    scale(monkeypatch, vars(cal), "LL_STEP_LATENCY_S", 10.0)
    with pytest.raises(claims.ClaimError, match="one-shot beats two-shot"):
        inference_2026.numbers()
