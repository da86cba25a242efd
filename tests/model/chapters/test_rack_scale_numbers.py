"""``gpucomm.model.chapters.rack_scale``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import rack_scale
from gpucomm.model.hardware import calibration as cal

PAGE = Path(__file__).resolve().parents[3] / "book" / "rack_scale.md"


def page_keys(page: Path) -> set[str]:
    """The glue keys a page references: ``{glue:text}`key``` in its prose and ``:answer: key`` of its self-checks."""
    text = page.read_text(encoding="utf-8")
    refs = set(re.findall(r"\{glue(?::[a-z]+)?\}`([^`:]+)(?::[^`]*)?`", text))
    return refs | {a for a in re.findall(r"^:answer:\s*(\S+)", text, re.M) if not re.fullmatch(r"[0-9.]+", a)}


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


def test_numbers_cover_the_page_and_are_finite():
    values = rack_scale.numbers()
    missing = page_keys(PAGE) - values.keys()
    assert not missing, missing
    for key, value in values.items():
        if isinstance(value, (int, float)):
            assert math.isfinite(value), key


def test_two_nodes_lose_less_than_a_ring_and_far_less_than_the_nic_ratio():
    v = rack_scale.numbers()
    assert v["ratio16_4g"] < v["ring16_4g_ratio"] < v["gb200_nvl72_ratio"]
    assert v["nvl_switch_ports"] == v["nvl_gpu_links"] == v["nvl_gpus"] * v["nvl_links_per_gpu"]


def test_a_slow_network_stops_the_nic_ratio_claim(monkeypatch, fresh_model):
    """The network at a tenth of its efficiency: two nodes now lose more than the NIC ratio, and the page stops."""
    rack_scale.numbers()
    scale(monkeypatch, vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError, match="two nodes lose less than the NIC ratio"):
        rack_scale.numbers()
