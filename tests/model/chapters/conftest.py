"""Fixtures of the chapter-number tests: the check every chapter module's ``numbers()`` passes against its page, and a
change to NCCL's tuner that more than one page's claims must notice."""

from __future__ import annotations

import math
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


@pytest.fixture
def nvls_without_nvlink_latency(monkeypatch, fresh_model):
    """NCCL's NVLS latency on NVLink (``HW_LATENCY_US["nvlink"]["nvls"]``: 25 us with Simple, 0 with LL and LL128) set
    to 0 for this test, on emptied model caches (NCCL's plan per fabric is cached)."""
    nvlink = dict(nccl_tuner.HW_LATENCY_US["nvlink"], nvls=(0.0, 0.0, 0.0))
    monkeypatch.setattr(nccl_tuner, "HW_LATENCY_US",
                        MappingProxyType(dict(nccl_tuner.HW_LATENCY_US, nvlink=MappingProxyType(nvlink))))
