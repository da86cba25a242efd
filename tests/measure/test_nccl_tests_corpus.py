"""Every log of the nccl-tests corpus (``tests/data/nccl_tests``) parses to its expected records.

The corpus holds real public logs (``real_*``: the thread they were posted in and its date on their first
line) and constructed variants (``constructed_*``, said so on their first line, or in the ``source`` of the
expected file for JSON): each exercises a layout or a failure the parser must read or flag. Each log
``NAME.txt`` or ``NAME.json`` has ``NAME.expected.json``: per run, what the parser reports (collective,
ranks and where they come from, layout, backend, timing, warning codes) and every record's printed values.

The expected files were written by this module (``python tests/measure/test_nccl_tests_corpus.py --write``)
and each was read against its log by hand; rewrite them only when a change of the parser is meant to change
what a log gives, and say which in the commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpucomm.measure.logs.files import read_log_text
from gpucomm.measure.logs.nccl_tests_results import log_to_results, read_nccl_tests_output

CORPUS = Path(__file__).resolve().parents[1] / "data" / "nccl_tests"
LOGS = sorted(p for p in CORPUS.iterdir() if p.suffix in (".txt", ".json") and not p.name.endswith(".expected.json"))
RECORD_FIELDS = ("size_bytes", "count", "type", "redop", "root", "in_place", "time_us", "algbw_gbps", "busbw_gbps", "wrong",
                 "max_error", "iter_min_us", "iter_p50_us", "iter_p99_us", "iter_max_us", "iter_mean_us", "iter_stdev_us",
                 "iter_cv_pct", "timestamp", "line")
META_FIELDS = ("collective", "collective_source", "num_ranks", "num_ranks_source", "layout", "backend", "source_tool",
               "time_over_ranks", "buffer_registration", "env", "out_of_bounds", "max_error", "check")


def expected_path(log: Path) -> Path:
    return log.with_name(log.stem + ".expected.json")


def describe(log: Path) -> list[dict]:
    """What the parser reads from one corpus log: per run, the metadata fields above, warning codes, records."""
    runs = []
    for parsed in read_nccl_tests_output(read_log_text(str(log))):
        meta, _ = log_to_results(parsed, input_name=log.name)
        runs.append({
            **{key: meta.get(key) for key in META_FIELDS},
            "warnings": parsed.warning_codes(),
            "records": [{k: getattr(r, k) for k in RECORD_FIELDS if getattr(r, k) is not None} for r in parsed.records],
        })
    return runs


def source_of(log: Path) -> str | None:
    """The log's source line (``# source: ...``), or for JSON the expected file's ``source``."""
    if log.suffix == ".txt":
        first = log.read_text().splitlines()[0]
        return first.removeprefix("# source: ") if first.startswith("# source: ") else None
    return json.loads(expected_path(log).read_text()).get("source")


def test_the_corpus_has_real_and_constructed_logs_each_with_its_source():
    assert len(LOGS) >= 15
    for log in LOGS:
        source = source_of(log)
        assert source, f"{log.name}: no source line"
        real = log.name.startswith("real_")
        assert source.startswith("https://github.com/NVIDIA/") if real else source.startswith("constructed"), log.name
        assert expected_path(log).exists(), f"{log.name}: no expected records"


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_every_corpus_log_parses_to_its_expected_records(log):
    expected = json.loads(expected_path(log).read_text())
    assert describe(log) == expected["runs"]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    for log in LOGS:
        path = expected_path(log)
        old = json.loads(path.read_text()) if path.exists() else {}
        source = old.get("source") if log.suffix == ".json" else source_of(log)
        path.write_text(json.dumps({"source": source, "runs": describe(log)}, indent=1) + "\n")
        print(path)
