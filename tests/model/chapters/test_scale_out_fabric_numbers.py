"""``gpucomm.model.chapters.scale_out_fabric``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import scale_out_fabric
from gpucomm.model.hardware import calibration as cal

PAGE = Path(__file__).resolve().parents[3] / "book" / "scale_out_fabric.md"


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
    values = scale_out_fabric.numbers()
    # the two log counts are read by gpucomm.measure in the page itself
    missing = page_keys(PAGE) - values.keys() - {"l1412_ib", "l1453_gdr"}
    assert not missing, missing
    for key, value in values.items():
        if isinstance(value, (int, float)):
            assert math.isfinite(value), key


def test_oversubscription_numbers_are_consistent():
    v = scale_out_fabric.numbers()
    assert v["rail_nodes"] == v["leaf_ports"] // 2 and v["tor_nodes"] * v["nics"] == v["leaf_ports"] // 2
    assert v["gpu_net_2"] == pytest.approx(v["ndr_gbps"] * v["share_2"])
    assert v["os1_busbw"] > v["os2_busbw"] > v["os4_busbw"]


def test_a_fast_network_stops_the_one_for_one_claim(monkeypatch, fresh_model):
    """NICs ten times as efficient: NVLink, not the network, sets the time, and a 2:1 leaf no longer costs 2x."""
    scale_out_fabric.numbers()
    scale(monkeypatch, vars(cal), "NET_EFFICIENCY", 10.0)
    with pytest.raises(claims.ClaimError, match="loses the ratio almost one for one"):
        scale_out_fabric.numbers()
