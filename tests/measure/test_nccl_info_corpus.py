"""Real public NCCL_DEBUG=INFO and PyTorch ProcessGroupNCCL excerpts (tests/data/nccl_info/): the finding ids of
each are compared with tests/data/nccl_info/expected.json, which records what its issue thread diagnosed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpucomm.measure.logs.nccl_info import parse_nccl_info_log

CORPUS = Path(__file__).resolve().parents[1] / "data" / "nccl_info"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
NAMES = sorted(p.stem for p in CORPUS.glob("*.log"))


def test_every_excerpt_has_an_expectation_and_at_least_20_hold_nccl_lines():
    assert NAMES == sorted(EXPECTED)
    with_nccl_lines = [n for n in NAMES if "NCCL INFO" in (CORPUS / f"{n}.log").read_text()
                       or "NCCL WARN" in (CORPUS / f"{n}.log").read_text()]
    assert len(with_nccl_lines) >= 20, with_nccl_lines


@pytest.mark.parametrize("name", NAMES)
def test_each_excerpt_carries_its_source_date_and_diagnosis(name):
    source, date, diagnosis = (CORPUS / f"{name}.log").read_text().splitlines()[:3]
    assert source.startswith("# source: https://github.com/") and date.startswith("# date: ")
    assert diagnosis.startswith("# diagnosis: ") and len(diagnosis) > 60


@pytest.mark.parametrize("name", NAMES)
def test_findings_of_each_excerpt(name):
    log = parse_nccl_info_log((CORPUS / f"{name}.log").read_text())
    assert sorted(f.code for f in log.findings) == sorted(EXPECTED[name])
    assert all(n > 3 for f in log.findings for n in f.lines)  # the evidence is in the excerpt, never its header
