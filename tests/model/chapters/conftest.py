"""Fixtures of the chapter-number tests: the check every chapter module's ``numbers()`` passes against its page, the
numbers of the committed model computed once per test module, and a change to NCCL's tuner that more than one page's
claims must notice."""

from __future__ import annotations

import math
from pathlib import Path
from types import MappingProxyType

import pytest

from gpucomm.model import nccl_tuner

BOUNDS = {"finite": lambda value: True, "non-negative": lambda value: value >= 0, "positive": lambda value: value > 0}
"""What :func:`check_page_numbers` asks of every number, besides being finite."""


@pytest.fixture
def check_page_numbers(page_refs):
    """``check_page_numbers(page, values, *, glued_by_page=(), numbers="finite")``: ``values`` (a chapter module's
    numbers, by glue key) give every key ``book/<page>.md`` reads, but those in ``glued_by_page`` (keys the page glues
    itself, from gpucomm.measure), and each of its numbers is finite and, with ``numbers`` "non-negative" or
    "positive", at least 0 or above 0. Raises AssertionError naming the missing keys or the number that fails."""
    def check(page: str, values: dict, *, glued_by_page=(), numbers: str = "finite") -> None:
        refs = page_refs(page) - set(glued_by_page)
        assert refs, f"book/{page}.md reads no glue key"
        assert refs <= set(values), sorted(refs - set(values))
        bound = BOUNDS[numbers]
        for key, value in values.items():
            if isinstance(value, (int, float)):
                assert math.isfinite(value) and bound(value), (key, value)
    return check


@pytest.fixture(scope="session")
def committed_numbers(pytestconfig):
    """``committed_numbers(numbers, *args, **kwargs)``: ``numbers(*args, **kwargs)`` (a chapter module's numbers) with
    the committed calibration, on emptied model caches, as a read-only mapping.

    For a test module's module-scoped fixture (``values``), which the tests that change nothing share: a module fixture
    is set up before the function fixtures of the test that first asks for it, and after the previous test's parameter
    changes were undone, so it never sees a changed parameter; the caches are emptied first in case a test left entries
    computed under one. Read-only, so no test can change what the next one reads."""
    root = pytestconfig.pluginmanager.get_plugin(str(Path(__file__).parents[2] / "conftest.py"))

    def compute(numbers, *args, **kwargs):
        root.clear_model_caches()
        return MappingProxyType(numbers(*args, **kwargs))
    return compute


@pytest.fixture
def nvls_without_nvlink_latency(monkeypatch, fresh_model):
    """NCCL's NVLS latency on NVLink (``HW_LATENCY_US["nvlink"]["nvls"]``: 25 us with Simple, 0 with LL and LL128) set
    to 0 for this test, on emptied model caches (NCCL's plan per fabric is cached)."""
    nvlink = dict(nccl_tuner.HW_LATENCY_US["nvlink"], nvls=(0.0, 0.0, 0.0))
    monkeypatch.setattr(nccl_tuner, "HW_LATENCY_US",
                        MappingProxyType(dict(nccl_tuner.HW_LATENCY_US, nvlink=MappingProxyType(nvlink))))
