"""``gpucomm.model.chapters.nvswitch``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import nvswitch
from gpucomm.model.hardware import calibration as cal

PAGE = Path(__file__).resolve().parents[3] / "book" / "nvswitch.md"


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
    values = nvswitch.numbers()
    missing = page_keys(PAGE) - values.keys()
    assert not missing, missing
    for key, value in values.items():
        if isinstance(value, (int, float)):
            assert math.isfinite(value), key


def test_the_page_table_and_numbers_agree():
    values = nvswitch.numbers()
    rows = {row["system"]: row for row in nvswitch.board_table()}
    assert rows["HGX/DGX H100, H200"]["switch chips"] == values["h100_chips"]
    assert values["pair_dir"] == pytest.approx(values["nv4_dir"] / values["peers"])
    assert values["nvls_wire"] < values["ring_wire"]


def test_nvls_claim_stops_when_nvls_loses(monkeypatch, fresh_model):
    """NVLS at 60 % of its fitted efficiency loses to the ring at 1 GiB: the page's sentence stops."""
    nvswitch.numbers()
    scale(monkeypatch, vars(cal), "NVLS_EFFICIENCY", 0.6)
    with pytest.raises(claims.ClaimError, match="NVLS is faster than the ring"):
        nvswitch.numbers()
