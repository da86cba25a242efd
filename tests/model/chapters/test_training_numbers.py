"""``gpucomm.model.chapters.training``: every number the page glues, and its words and claims follow the model."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import training
from gpucomm.model.hardware import calibration as cal

PAGE = Path(__file__).resolve().parents[3] / "book" / "training.md"
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
    values = training.numbers()
    assert refs <= set(values), sorted(refs - set(values))
    for key, value in values.items():
        if isinstance(value, (int, float)):
            assert math.isfinite(value) and value >= 0, (key, value)


def test_dp_and_fsdp_volumes_follow_the_model_size_tp_the_tokens():
    values = training.numbers()
    assert values["fsdp_over_dp"] == pytest.approx(1.5)
    assert values["quiz_fsdp_gb"] == pytest.approx(values["fsdp_over_dp"] * values["quiz_dp_ring_gb"])
    assert values["tp_pc_s"] > values["pc_compute_s"] > values["dp_pc_exp_s"]


def test_slow_network_stops_the_edr_claim(monkeypatch, fresh_model):
    """The network at a tenth of its fitted efficiency: EDR's DP all_reduce is no longer small next to the compute."""
    training.numbers()
    scale(monkeypatch, vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError, match="EDR's DP all_reduce is still small"):
        training.numbers()


def test_fast_host_staging_stops_the_small_batch_claim(monkeypatch, fresh_model):
    """Host staging 4x as efficient: DP over PCIe hides even with 2048 tokens per GPU, and the page stops."""
    scale(monkeypatch, vars(cal), "HOST_STAGED_EFFICIENCY", 4.0)
    with pytest.raises(claims.ClaimError, match="with 2048 its exposed time is no longer small"):
        training.numbers()
