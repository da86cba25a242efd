"""Published measurements bundled with the package (``gpucomm/data``), each with its source.

Pages quote measured numbers through this module, so that a number in prose is read
from one sourced file instead of typed by hand.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources

from gpucomm import GpucommError


@dataclass(frozen=True)
class Measurement:
    """One published value in SI units (s, bytes, bytes/s, counts) with where it comes from."""

    key: str
    value: float
    unit: str
    description: str
    source: str


PCIE5_H2D_COPY = Measurement(
    "pcie5_h2d_copy_bytes_per_s", 55.4e9, "bytes/s",
    "host-to-device copy over PCIe 5.0 x16 on an 8x H200 server (the packet overhead of PCIe, ~88 % of 63 GB/s)",
    "https://github.com/stas00/ml-engineering/blob/master/network/README.md")
"""A measured PCIe 5.0 x16 copy rate, for the chapters (not a model input)."""


def _read(name: str) -> tuple[list[dict], str]:
    text = resources.files("gpucomm.model").joinpath("data", name).read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    source = next((c.split("source:", 1)[1].strip().split()[0] for c in comments if "source:" in c), "")
    rows = list(csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#")))
    return rows, source


@cache
def seed_llama70b_tp4() -> dict[str, Measurement]:
    """The seed article's Llama-3-70B TP=4 measurements (nccl-tests and vLLM prefill), by key.

    Examples
    --------
    >>> seed_llama70b_tp4()["all_reduce_nvlink3_s"].value
    0.000603
    """
    rows, source = _read("seed_llama70b_tp4.csv")
    return {r["key"]: Measurement(r["key"], float(r["value"]), r["unit"], r["description"], source) for r in rows}


@cache
def cases() -> dict[str, dict]:
    """Rows of ``cases.csv`` (single published data points with context), by id (``"C04"``)."""
    rows, _ = _read("cases.csv")
    return {r["id"]: r for r in rows}


def case(case_id: str) -> dict:
    """One row of ``cases.csv``; raise a clear error for an unknown id."""
    table = cases()
    if case_id not in table:
        raise GpucommError(f"unknown measurement case {case_id!r}: expected one of {', '.join(table)}")
    return table[case_id]
