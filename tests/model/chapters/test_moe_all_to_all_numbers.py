"""``gpucomm.model.chapters.moe_all_to_all``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import moe_all_to_all
from gpucomm.model.hardware import calibration as cal

PAGE = Path(__file__).resolve().parents[3] / "book" / "moe_all_to_all.md"


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
    values = moe_all_to_all.numbers()
    missing = page_keys(PAGE) - values.keys()
    assert not missing, missing
    for key, value in values.items():
        if isinstance(value, (int, float)):
            assert math.isfinite(value), key


def test_deepep_comparison_is_split_into_the_model_terms():
    """The model's decode dispatch = transfer + fixed term (+ launch); DeepEP sits between line rate and the model."""
    v = moe_all_to_all.numbers()
    assert v["ll_model_dus"] == pytest.approx(v["ll_model_xfer_us"] + v["ll_model_lat_us"], abs=10)
    assert v["ll_line_us"] < v["dep_low_latency_64_dus"] < v["ll_model_dus"]
    assert v["ll_xfer_vs_dep"].endswith("less" if v["ll_model_xfer_us"] < v["dep_low_latency_64_dus"] else "more")


def test_a_slower_network_flips_the_word_and_stops_the_page(monkeypatch, fresh_model):
    """The network at 40 % of its efficiency: the model's transfer term alone now exceeds DeepEP's time; the phrase says
    'more' and the claim that the transfer term is within 30 % of DeepEP stops the page."""
    base = moe_all_to_all.numbers()["ll_xfer_vs_dep"]
    scale(monkeypatch, vars(cal), "NET_EFFICIENCY", 0.4)
    with pytest.raises(claims.ClaimError):
        moe_all_to_all.numbers()
    broken: list = []
    monkeypatch.setattr(claims, "require", lambda ok, claim: None if ok else broken.append(claim))
    flipped = moe_all_to_all.numbers()["ll_xfer_vs_dep"]
    assert any("transfer term alone is within 30 %" in claim for claim in broken), broken
    assert base.endswith("less") and flipped.endswith("more"), (base, flipped)
