"""The nccl-tests log parser: every bundled real log, the layouts and pathologies, and never a crash.

The bundled logs (``gpucomm/model/data/nccl_logs``) are copies of published nccl-tests output (first
line: ``# source: <URL>``). The small logs written in this file are SYNTHETIC: they reproduce a
format (a layout, a launcher prefix, a failure) with made-up numbers, only to test the parser.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_tests import ParsedLog, bundled_log_names, bundled_log_text, parse_nccl_tests, read_bundled_log
from gpucomm.model.collectives import busbw_factor

EXPECTED_WARNINGS = {
    "C01": [], "C02": [], "C03": ["busbw_drop"], "C04": ["in_place_outlier", "busbw_dip"], "C05": [], "C06": [],
    "C07": ["busbw_drop", "busbw_drop"], "C08": [], "C28": ["old_algbw", "no_summary"], "C29": ["stopped_early"],
    "S01": ["in_place_outlier"], "S02": ["in_place_outlier", "busbw_dip"], "S03": [],
    "S06": [], "S07": [], "S08": ["duplicate_size"], "S09": ["duplicate_size"], "S10": ["duplicate_size"], "S11": [],
    "S12": ["duplicate_size", "in_place_outlier"], "S13": ["duplicate_size"], "S14": [], "S15": [], "S19": [],
}
EXPECTED_ROWS = {"C01": 4, "C02": 4, "C03": 4, "C04": 4, "C05": 4, "C06": 4, "C07": 4, "C08": 31, "C28": 13, "C29": 4,
                 "S01": 32, "S02": 32, "S03": 24, "S06": 25, "S07": 25, "S08": 34, "S09": 34, "S10": 34, "S11": 31,
                 "S12": 31, "S13": 31, "S14": 31, "S15": 10, "S19": 25}
EXPECTED_RANKS = {"C01": 2, "C02": 4, "C03": 2, "C04": 4, "C05": 4, "C06": 4, "C07": 4, "C08": 16, "C28": 2, "C29": 2,
                  "S01": 16, "S02": 32, "S03": 16, "S06": 8, "S07": 8, "S08": 8, "S09": 8, "S10": 8, "S11": 4, "S12": 4,
                  "S13": 4, "S14": 16, "S15": 8, "S19": 4}


def test_every_bundled_log_keeps_its_source_line():
    names = bundled_log_names()
    assert set(names) == set(EXPECTED_ROWS)
    for name in names:
        first = bundled_log_text(name).splitlines()[0]
        assert re.match(r"^# source: https://github\.com/\S+$", first), (name, first)
        assert read_bundled_log(name).metadata["source"] == first.split(": ", 1)[1]


@pytest.mark.parametrize("name", sorted(EXPECTED_ROWS))
def test_bundled_log_rows_ranks_and_warnings(name):
    log = read_bundled_log(name)
    assert len(log.out_of_place()) == len(log.in_place()) == EXPECTED_ROWS[name]
    assert log.metadata.get("num_ranks") == EXPECTED_RANKS[name]
    assert log.warning_codes() == EXPECTED_WARNINGS[name]
    assert all(r.wrong in (0, None) for r in log.records)


@pytest.mark.parametrize("name", sorted(EXPECTED_ROWS))
def test_every_row_matches_the_text_and_the_busbw_factor(name):
    """Each record is its line's numbers; busbw / algbw is the nccl-tests factor for the log's rank count."""
    # S03's command is a wrapper script (run_nccl_tests.sh -t all_gather) the parser does not read
    overrides = {"S03": {"collective": "all_gather"},
                 "S09": {"collective": "all_gather"}}
    log = read_bundled_log(name, **overrides.get(name, {}))
    lines = bundled_log_text(name).splitlines()
    for r in log.records:
        tokens = lines[r.line - 1].split()
        assert int(tokens[0]) == r.printed_size_bytes and int(tokens[1]) == r.count and tokens[2] == r.type
        half = tokens[-4:] if r.in_place else tokens[-8:-4]
        assert (float(half[0]), float(half[1]), float(half[2])) == (r.time_us, r.algbw_gbps, r.busbw_gbps)
        if r.algbw_gbps >= 1:
            # nccl-tests before 2020-06-19 printed all_gather's algbw as (n-1)/n of size / time, busbw = algbw (C28)
            old = log.metadata.get("old_algbw_ranks")
            factor = 1.0 if old else busbw_factor(log.metadata["collective"], log.metadata["num_ranks"])
            ratio = (old - 1) / old if old else 1.0
            assert r.busbw_gbps == pytest.approx(r.algbw_gbps * factor, abs=0.005 * factor + 0.0051)
            assert r.algbw_gbps == pytest.approx(ratio * r.size_bytes / (r.time_us * 1e3), rel=0.01, abs=0.011)


def test_log_sweeps_csv_is_what_the_parser_reads_from_the_logs():
    """The model layer's copy of the validation sweeps' rows (it cannot import this parser) matches the logs."""
    from gpucomm.measure.logs.nccl_tests import LOG_SWEEPS_CSV, log_sweeps_csv
    from gpucomm.model.measurements import bundled_data
    from gpucomm.model.validation import LOG_SWEEPS_CSV as MODEL_CSV
    from gpucomm.model.validation import log_sweep_names

    assert MODEL_CSV == LOG_SWEEPS_CSV and log_sweep_names() == ["S01", "S02", "C08", "S03", "S06", "S07", "S08", "S09", "S10",
                                                                     "S19", "S11", "S12", "S13", "S14", "S15"]
    assert bundled_data(LOG_SWEEPS_CSV).read_text() == log_sweeps_csv(log_sweep_names()), \
        "run python scripts/extract_log_sweeps.py"
    s01 = read_bundled_log("S01")
    assert s01.metadata["nccl_version"] == "2.26.2" and s01.in_place()[-1].busbw_gbps == 469.10


def test_c04_in_place_outlier_values():
    log = read_bundled_log("C04")
    outlier = next(r for r in log.in_place() if r.size_bytes == 4 * 2**30)
    assert (outlier.time_us, outlier.busbw_gbps) == (39252, 164.13)
    assert log.metadata["command"] == "./build/all_reduce_perf -b 1G -e 10G -f 2 -g 4"
    assert (log.metadata["minBytes"], log.metadata["maxBytes"], log.metadata["step_factor"]) == (2**30, 10 * 2**30, 2)


def test_c07_drop_and_c06_inferred_ranks():
    c07 = read_bundled_log("C07")
    assert "24.27" in c07.warnings[0].message and "19.98" in c07.warnings[0].message
    c06 = read_bundled_log("C06")
    assert (c06.metadata["collective"], c06.metadata["collective_source"]) == ("all_reduce", "busbw/algbw")
    assert c06.metadata["num_ranks_source"] == "busbw/algbw"


def test_c08_header_devices_and_multiline_command():
    log = read_bundled_log("C08")
    m = log.metadata
    assert (m["nThread"], m["nGpus"], m["minBytes"], m["maxBytes"], m["step_factor"]) == (1, 1, 8, 8 * 2**30, 2)
    assert (m["warmup_iters"], m["iters"], m["agg_iters"], m["validation"], m["graph"]) == (5, 20, 1, 1, 0)
    assert len(m["devices"]) == 16 and {d["host"] for d in m["devices"]} == {"ztan-mig-235z", "ztan-mig-gq73"}
    assert m["command"].startswith("mpirun") and "-np 16" in m["command"] and m["command"].endswith("-g 1")
    assert log.out_of_place()[-1].busbw_gbps == 338.82
    assert log.metadata["avg_busbw_gbps"] == 70.742


def test_c28_is_all_gather_of_nccl_tests_before_2020_06_19():
    """Blank redop column, size = 2 x count x 4 B, algbw = count x 4 x (n-1) / time = busbw: old all_gather_perf."""
    log = read_bundled_log("C28")
    first = log.out_of_place()[0]
    assert log.metadata["layout"] == "legacy_no_redop"
    assert (first.printed_size_bytes, first.size_bytes, first.count) == (32768, 32768, 4096)
    assert first.redop is None and first.root is None and first.wrong is None and first.max_error == 0.0
    m = log.metadata
    assert (m["collective"], m["collective_source"], m["num_ranks"], m["num_ranks_source"]) == (
        "all_gather", "size/count", 2, "size/count")
    last = log.as_results()[-1]  # today's definitions: algbw = size / time, busbw = algbw x (n-1)/n
    assert last["algbw_bytes_per_s"] == pytest.approx(134217728 / 3298.6e-6, rel=0.01)
    assert last["busbw_bytes_per_s"] == pytest.approx(last["algbw_bytes_per_s"] / 2, rel=0.01)
    given = read_bundled_log("C28", collective="all_reduce", num_ranks=2)  # what this project assumed until 2026-12
    assert [w.code for w in given.warnings].count("contradiction") == 1


def test_all_gather_rows_with_todays_algbw_are_not_taken_for_old_ones(rewrite_c28):
    """The same rows with algbw = size / time and busbw = algbw / 2 (today's all_gather on 2 ranks) keep the
    layout's usual inference: no old_algbw warning."""
    def todays(t):
        algbw = int(t[0]) / (float(t[3]) * 1e3)
        return [*t[:4], f"{algbw:.2f}", f"{algbw / 2:.2f}", *t[6:]]

    log = parse_nccl_tests(rewrite_c28(todays))
    assert "old_algbw" not in log.warning_codes() and "old_algbw_ranks" not in log.metadata


def test_old_reduce_scatter_rows_have_a_redop_column(rewrite_c28):
    """reduce_scatter_perf of the same nccl-tests printed a redop column and the same old algbw (made from C28's rows
    by inserting 'sum'; a constructed example, not a measurement)."""
    log = parse_nccl_tests(rewrite_c28(lambda t: [*t[:3], "sum", *t[3:]]))
    m = log.metadata
    assert (m["layout"], m["collective"], m["num_ranks"], m["old_algbw_ranks"]) == ("legacy", "reduce_scatter", 2, 2)
    assert "reduce_scatter of nccl-tests before 2020-06-19 on 2 ranks (a redop column" in log.warnings[0].message


def test_c29_version_and_early_stop():
    log = read_bundled_log("C29")
    m = log.metadata
    assert (m["version"], m["nccl_version"], m["collective"], m["unalign"]) == ("2.20.0", "2.31.2", "all_reduce", 0)
    assert "65536 B" in log.warnings[0].message and "8589934592" in log.warnings[0].message


def test_as_results_feeds_the_measured_plot(shapeless_log):
    results = read_bundled_log("C08").as_results()
    assert len(results) == 31 and results[0]["msg_bytes"] == 8 and results[0]["num_ranks"] == 16
    assert results[-1]["busbw_bytes_per_s"] == pytest.approx(338.82e9)
    with pytest.raises(GpucommError, match="which collective"):
        parse_nccl_tests(shapeless_log).as_results()


# --- synthetic logs: formats and failures (numbers made up) --------------------------------------------------

ROW = "  {size:>10}  {count:>10}     float     sum      -1    {t:>6}  {a:>6}  {b:>6}  {w:>5}    {t:>6}  {a:>6}  {b:>6}  {w:>5}"
HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")


def _row(size: int, t: float, n: int = 2, wrong: int | str = 0) -> str:
    algbw = size / (t * 1e3)
    return ROW.format(size=size, count=size // 4, t=t, a=f"{algbw:.2f}", b=f"{algbw * 2 * (n - 1) / n:.2f}", w=wrong)


def test_one_rank_is_flagged():
    text = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 5 agg iters: 1 validation: 1 graph: 0\n"
            "# Using devices\n#  Rank  0 Group  0 Pid    127 on host device  0 [0x00] NVIDIA A10G\n" + HEADER
            + ROW.format(size=8, count=2, t=5.1, a="0.00", b="0.00", w=0) + "\n"
            + ROW.format(size=16, count=4, t=5.2, a="0.00", b="0.00", w=0) + "\n# Avg bus bandwidth    : 0\n")
    log = parse_nccl_tests(text, collective="all_reduce")
    assert log.metadata["num_ranks"] == 1 and log.warning_codes() == ["one_rank"]
    assert "MPI=1" in str(log.warnings[0])


def test_one_rank_inferred_from_zero_busbw():
    text = HEADER + ROW.format(size=2**20, count=2**18, t=20.0, a="52.43", b="0.00", w=0) + "\n# Avg bus bandwidth : 0\n"
    assert "one_rank" in parse_nccl_tests(text).warning_codes()


def test_wrong_results_and_failed_bounds_are_flagged():
    text = HEADER + _row(2**20, 40.0) + "\n" + _row(2**21, 80.0, wrong=17) + "\n# Out of bounds values : 17 FAILED\n# Avg bus bandwidth : 1\n"  # noqa: E501
    log = parse_nccl_tests(text)
    assert log.warning_codes()[:2] == ["out_of_bounds", "wrong"]
    assert "17 wrong" in log.warnings[1].message


def test_mpirun_tag_output_and_srun_labels():
    body = HEADER + _row(2**20, 40.0, n=8) + "\n" + _row(2**21, 75.0, n=8) + "\n# Avg bus bandwidth : 40\n"
    tagged = "\n".join("[1,0]<stdout>:" + line for line in body.splitlines())
    labelled = "\n".join("0: " + line for line in body.splitlines())
    for text in (tagged, labelled):
        log = parse_nccl_tests(text)
        assert len(log.records) == 4 and log.metadata["num_ranks"] == 8 and log.warning_codes() == []


def test_nccl_debug_lines_and_crlf_are_ignored():
    text = ("host:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\r\n"
            "host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\r\n" + HEADER.replace("\n", "\r\n")
            + _row(2**20, 40.0) + "\r\n# Avg bus bandwidth : 26\r\n")
    log = parse_nccl_tests(text)
    assert log.metadata["nccl_version"] == "2.18.5" and len(log.records) == 2


LEGACY_HEADER = "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"


def test_legacy_layout_with_redop_and_error_column():
    text = (LEGACY_HEADER
            + "     1048576        262144   float     sum    40.00   26.21   45.88  2e-07    41.00   25.57   44.76  0e+00\n"
            "# Avg bus bandwidth    : 45\n")
    log = parse_nccl_tests(text)
    r = log.out_of_place()[0]
    assert log.metadata["layout"] == "legacy" and r.redop == "sum" and r.root is None and r.max_error == 2e-07
    assert r.size_bytes == 1048576  # not doubled here: algbw matches the size column
    assert log.metadata["num_ranks"] == 8


def test_legacy_error_column_is_a_deviation_judged_against_nccl_tests_bound():
    """The old 'error' column is the largest deviation, not a count: float noise (4e-07) is within nccl-tests'
    own bound (1e-5 per extra rank for float) and the footer says OK, so nothing is wrong (it was called wrong
    results before); a deviation beyond the bound still is."""
    row = "     1048576        262144   float     sum    40.00   26.21   45.88  {e}    41.00   25.57   44.76  0e+00\n"
    noise = parse_nccl_tests(LEGACY_HEADER + row.format(e="4e-07") + "# Out of bounds values : 0 OK\n"
                             "# Avg bus bandwidth    : 45\n")
    assert noise.warning_codes() == [] and noise.out_of_place()[0].max_error == 4e-07
    no_footer = parse_nccl_tests(LEGACY_HEADER + row.format(e="4e-07"))
    assert "error" not in no_footer.warning_codes()
    wrong = parse_nccl_tests(LEGACY_HEADER + row.format(e="3e-02") + "# Avg bus bandwidth    : 45\n")
    assert wrong.warning_codes() == ["error"]
    assert "bound 7e-05 for float on 8 ranks" in wrong.warnings[0].message
    half = ("     1048576        524288    half     sum    40.00   26.21   45.88  {e}    41.00   25.57   44.76  0e+00\n")
    assert parse_nccl_tests(LEGACY_HEADER + half.format(e="5e-03")).warning_codes() == ["no_summary"]


def test_not_checked_wrong_column():
    text = HEADER + _row(2**20, 40.0, wrong="N/A") + "\n# Avg bus bandwidth : 26\n"
    assert parse_nccl_tests(text).records[0].wrong is None


def test_all_gather_count_is_per_rank():
    """nccl-tests prints the per-rank count for all_gather; size is the total (nccl#1435 layout)."""
    text = ("# command: ./build/all_gather_perf -b 16M -e 32M -f 2 -g 2 -d bfloat16\n" + HEADER
            + "    16777216       4194304  bfloat16    none      -1    108.8  154.20   77.10      0    98.19  170.86   85.43      0\n"
            + "    33554432       8388608  bfloat16    none      -1    183.0  183.36   91.68      0    156.1  214.96  107.48      0\n"
            + "# Avg bus bandwidth : 90\n")
    log = parse_nccl_tests(text)
    assert log.metadata["collective"] == "all_gather" and log.metadata["num_ranks"] == 2
    assert log.records[0].size_bytes == 16777216 and log.warning_codes() == []


def test_stopped_early_cut_rows_and_interleaved_runs():
    header = "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 16777216 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"  # noqa: E501
    full = header + HEADER + _row(2**20, 40.0) + "\n" + _row(2**21, 79.0) + "\n"
    cut = full + _row(2**22, 150.0)[:60] + "\n"
    log = parse_nccl_tests(cut)
    assert log.warning_codes() == ["incomplete_row", "stopped_early"]
    twice = parse_nccl_tests(full + "# Avg bus bandwidth : 1\n" + full + "# Avg bus bandwidth : 1\n")
    assert "interleaved_runs" in twice.warning_codes() and "duplicate_size" in twice.warning_codes()


def test_bad_values_are_skipped_with_a_warning():
    text = HEADER + _row(2**20, 40.0) + "\n" + _row(2**21, 80.0).replace("80.0", "abc", 1) + "\n# Avg bus bandwidth : 1\n"
    log = parse_nccl_tests(text)
    assert len(log.records) == 2 and log.warning_codes() == ["bad_row"]


@pytest.mark.parametrize("text", ["", "hello\nworld", "# only comments\n# Avg bus bandwidth : 3\n",
                                  "  8  2  float  sum  -1  12.0  0.00\n"])
def test_garbage_raises_a_clear_error(text):
    with pytest.raises(GpucommError, match="no nccl-tests result rows"):
        parse_nccl_tests(text)


def test_bad_arguments():
    with pytest.raises(GpucommError, match="must be text"):
        parse_nccl_tests(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(GpucommError, match="unknown collective"):
        parse_nccl_tests(HEADER + _row(2**20, 40.0), collective="allreduce")
    with pytest.raises(GpucommError, match="number of ranks"):
        parse_nccl_tests(HEADER + _row(2**20, 40.0), num_ranks=0)
    with pytest.raises(GpucommError, match="unknown bundled"):
        bundled_log_text("C99")


# --- never anything but GpucommError ------------------------------------------------------------------------

def _parse_or_gpucomm_error(text: str) -> None:
    try:
        result = parse_nccl_tests(text)
    except GpucommError:
        return
    assert isinstance(result, ParsedLog) and result.records


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # examples: the profile (tests/conftest.py)
@given(st.text())
def test_arbitrary_text_raises_only_gpucomm_error(text):
    _parse_or_gpucomm_error(text)


_ROWISH = st.lists(st.one_of(
    st.sampled_from(["#", "8", "1073741824", "-1", "0", "float", "sum", "N/A", "0e+00", "1e999", "nan", "inf",
                     "[1,0]<stdout>:", "0:", ">", "maxBytes", "nGpus", "Rank", "Pid", "on", "device", "_perf",
                     "all_reduce_perf", "-g", "-np", "mpirun", "-e", "1e308T", "\\", "99999999999999999999999"]),
    st.from_regex(r"-?[0-9]{1,25}(\.[0-9]{0,3})?", fullmatch=True)), max_size=16)


@settings(deadline=None)  # examples: the profile (tests/conftest.py)
@given(st.lists(_ROWISH.map(" ".join), max_size=12).map("\n".join))
def test_row_like_noise_raises_only_gpucomm_error(text):
    _parse_or_gpucomm_error(text)


@settings(deadline=None)
@given(name=st.sampled_from(sorted(EXPECTED_ROWS)), cut=st.floats(0, 1), rng_seed=st.integers(0, 2**32 - 1),
       edits=st.integers(0, 30))
def test_truncated_and_garbled_logs_raise_only_gpucomm_error(name, cut, rng_seed, edits):
    text = bundled_log_text(name)
    text = text[: int(len(text) * cut)]
    rng = random.Random(rng_seed)
    chars = list(text)
    for _ in range(edits):
        if not chars:
            break
        i = rng.randrange(len(chars))
        op = rng.randrange(3)
        if op == 0:
            del chars[i]
        elif op == 1:
            chars[i] = rng.choice("0123456789.-e# \nabcN/A\\")
        else:
            chars.insert(i, rng.choice(" \n\t#-1"))
    lines = "".join(chars).splitlines()
    rng.shuffle(lines) if rng_seed % 3 == 0 else None
    _parse_or_gpucomm_error("\n".join(lines))


def test_recorded_dtype_names_derive_from_the_element_type_table():
    """nccl-tests' type names map to torch names through gpucomm.model.dtypes, as they were recorded before;
    FP8 keeps the printed name (results files already record it so)."""
    from gpucomm.measure.logs.nccl_tests_results import DTYPE_NAMES, record_dtype
    from gpucomm.model.dtypes import BY_SPELLING

    recorded_before = {"float": "float32", "half": "float16", "double": "float64", "fp16": "float16", "fp32": "float32",
                       "fp64": "float64", "bf16": "bfloat16", "int": "int32", "char": "int8", "uint8": "uint8"}
    assert {k: DTYPE_NAMES[k] for k in recorded_before} == recorded_before
    assert all(BY_SPELLING[s].name == name for s, name in DTYPE_NAMES.items())
    assert [record_dtype(t) for t in ("f8e4m3", "F8E5M2", "bfloat16", "Int8", "mystery")] == \
        ["f8e4m3", "f8e5m2", "bfloat16", "int8", "mystery"]


# --- what a new user met with real logs: small logs cut from the bundled ones ---------------------------------

def _lines(name: str) -> list[str]:
    return bundled_log_text(name).splitlines()


def _rows(name: str) -> list[str]:
    """The result rows of a bundled log, verbatim."""
    return [line for line in _lines(name) if line.strip() and line.strip()[0].isdigit()]


def _preamble(name: str) -> list[str]:
    """The bundled log's lines before its first result row."""
    lines = _lines(name)
    return lines[:lines.index(_rows(name)[0])]


@pytest.mark.parametrize("prefix", ["[1,0]<stdout>:", "  [1,0]<stdout>: ", "[0]", "[3] ", "0: [1,0]<stdout>:",
                                    "[1,0]<stdout>:[2024-05-01 10:00:00] "])
def test_launcher_rank_prefixes_fused_into_every_line(prefix):
    """mpirun/Intel MPI tags directly before the size (no space), after spaces, nested under srun, with a timestamp:
    the rows are read (before: 'no nccl-tests result rows found' for '[0]', leading spaces and nesting)."""
    text = "\n".join(prefix + line.lstrip() for line in _lines("C08"))
    log = parse_nccl_tests(text)
    assert len(log.in_place()) == 31 and log.metadata["num_ranks"] == 16
    assert log.in_place()[-1].busbw_gbps == 337.35 and log.warning_codes() == []


def test_two_runs_in_one_file_are_two_sweeps():
    """C06's run then C29's run in one file: each is its own sweep (before: one merged sweep, without a word)."""
    from gpucomm.measure.logs.nccl_tests import parse_nccl_tests_runs

    text = bundled_log_text("C29") + "\n" + "\n".join(_lines("C08")[2:])
    runs = parse_nccl_tests_runs(text)
    assert [len(r.in_place()) for r in runs] == [4, 31]
    assert [(r.metadata["run"], r.metadata["runs"]) for r in runs] == [(1, 2), (2, 2)]
    assert [r.metadata["num_ranks"] for r in runs] == [2, 16]
    assert runs[0].warning_codes() == ["stopped_early"] and runs[1].warning_codes() == []
    assert runs[1].metadata["source"] == runs[0].metadata["source"]  # one source line for the file
    merged = parse_nccl_tests(text)
    assert "several_runs" in merged.warning_codes()
    assert "2 runs one after another" in next(w.message for w in merged.warnings if w.code == "several_runs")


def test_sizes_starting_again_split_one_invocation_into_sweeps():
    """-d all: one header, one sweep per type, one summary shared by them."""
    from gpucomm.measure.logs.nccl_tests import parse_nccl_tests_runs

    rows = _rows("C06")
    halves = [r.replace("     float", "      half").replace("268435456", "536870912") for r in rows]
    text = "\n".join(_preamble("C08")[2:] + rows + halves + _lines("C06")[-2:])
    runs = parse_nccl_tests_runs(text)
    assert [{r.type for r in run.records} for run in runs] == [{"float"}, {"half"}]
    assert all(run.metadata["avg_busbw_gbps"] == 369.941 and run.metadata["iters"] == 20 for run in runs)


def test_a_run_that_printed_no_row_is_named():
    from gpucomm.measure.logs.nccl_tests import parse_nccl_tests_runs

    text = bundled_log_text("C06") + "\n" + "\n".join(_preamble("C29")[2:]) + "\n"
    runs = parse_nccl_tests_runs(text)
    assert len(runs) == 1 and runs[0].warning_codes()[-1] == "empty_run"


def test_interleaved_single_process_runs_stay_one_run():
    """Under mpirun without MPI=1 every process prints its own header first: not separate sweeps."""
    from gpucomm.measure.logs.nccl_tests import parse_nccl_tests_runs

    header = next(line for line in _preamble("C08") if line.startswith("# nThread"))
    rows = _rows("C08")[-4:]
    text = "\n".join([header, header] + [r for row in rows for r in (row, row)])
    assert len(parse_nccl_tests_runs(text)) == 1


def test_a_dip_in_the_middle_is_flagged_with_its_size():
    """C04's in-place 4 GiB is 29 % below the 2 GiB busbw, and 8 GiB recovers (before: only the largest size
    was compared with the peak, so nothing was said)."""
    log = read_bundled_log("C04")
    dip = next(w.message for w in log.warnings if w.code == "busbw_dip")
    assert dip.startswith("in-place: busbw dips at 1 size(s)") and "4294967296 B: 164.13 GB/s (-29% from 230.13" in dip
    rows = _rows("C08")
    # 2 GiB, both placements 1.27x slower (time, algbw and busbw together: busbw/algbw stays 16 ranks' 1.875)
    rows[28] = rows[28].replace("12646  169.81  318.40", "16081  133.54  250.39").replace("12641  169.88  318.52",
                                                                                         "16074  133.59  250.48")
    text = "\n".join(_preamble("C08") + rows + _lines("C08")[-2:])
    log = parse_nccl_tests(text)
    assert log.warning_codes() == ["busbw_dip", "busbw_dip"]
    assert "2147483648 B: 250.39 GB/s (-16% from 297.86 GB/s at 1073741824 B)" in log.warnings[0].message


def test_a_cliff_is_flagged_where_it_starts():
    log = read_bundled_log("C07")
    assert log.warning_codes() == ["busbw_drop", "busbw_drop"]
    assert "to 19.98 GB/s at the largest size, 8589934592 B (-18%)" in log.warnings[0].message
    rows = _rows("C06")
    rows[2] = rows[2].replace("370.34", "300.34")
    rows[3] = rows[3].replace("370.70", "301.70")
    text = "\n".join(rows + ["# Avg bus bandwidth    : 300"])
    cliff = next(w.message for w in parse_nccl_tests(text).warnings if w.code == "busbw_drop")
    assert "to 300.34 GB/s at 4294967296 B and stays down to the largest size" in cliff


def test_reducing_max_bytes_is_not_a_crash():
    """nccl-tests' 'Reducing maxBytes' note (GPU memory): the sweep ends early by design (before: stopped_early,
    'the run crashed')."""
    rows = _rows("C08")[:29]  # 8 B .. 2 GiB of an 8 GiB sweep
    note = ["#", "# Reducing maxBytes to 3221225472 due to memory limitation"]
    text = "\n".join(_preamble("C08") + note + rows + _lines("C08")[-2:])
    log = parse_nccl_tests(text)
    assert log.warning_codes() == ["max_bytes_reduced"] and log.metadata["maxBytes"] == 3221225472
    assert log.metadata["requested_max_bytes"] == 8589934592
    without_note = parse_nccl_tests("\n".join(_preamble("C08") + rows + _lines("C08")[-2:]))
    assert without_note.warning_codes() == ["max_bytes_reduced"]  # the summary says it finished
    assert parse_nccl_tests("\n".join(_preamble("C08") + rows)).warning_codes() == ["stopped_early"]


def test_partial_logs_say_collective_and_ranks_inferred():
    """Rows alone: the shape comes from the numbers, with how (before: 'collective ?, ? ranks')."""
    all_gather = ("    16777216       4194304  bfloat16    none      -1    108.8  154.20   77.10      0"
                  "    98.19  170.86   85.43      0\n"
                  "    33554432       8388608  bfloat16    none      -1    183.0  183.36   91.68      0"
                  "    156.1  214.96  107.48      0\n")
    m = parse_nccl_tests(all_gather).metadata
    assert "collective" not in m and m["collective_candidates"] == ["all_gather", "all_to_all"]
    assert (m["num_ranks"], m["num_ranks_source"]) == (2, "size/count")
    spark = parse_nccl_tests("\n".join(_rows("C29"))).metadata  # busbw = algbw, reducing, no root: 2-rank all_reduce
    assert (spark["collective"], spark["collective_source"], spark["num_ranks"]) == ("all_reduce", "columns", 2)
    gcp = parse_nccl_tests("\n".join(_rows("C08")[14:])).metadata
    assert (gcp["collective"], gcp["num_ranks"], gcp["num_ranks_source"]) == ("all_reduce", 16, "busbw/algbw")


def test_given_shape_contradicting_the_log_is_named():
    """--collective/--ranks that the binary name or busbw/algbw contradict: a warning with both values."""
    log = read_bundled_log("C04", num_ranks=8, collective="broadcast")
    messages = [w.message for w in log.warnings if w.code == "contradiction"]
    assert "the collective given (broadcast) contradicts the log: all_reduce (from the command line)" in messages[0]
    assert "the number of ranks given (8) contradicts the log: 4 (from the command line)" in messages[1]
    assert "busbw/algbw of the rows is 1.5" in messages[2] and "not 1, the factor of broadcast on 8 ranks" in messages[2]
    assert log.metadata["num_ranks"] == 8  # the given value is kept
    only_ratio = read_bundled_log("C06", num_ranks=8)  # no command: busbw/algbw says 4
    message = next(w.message for w in only_ratio.warnings if w.code == "contradiction")
    assert "not 1.75, the factor of all_reduce on 8 ranks" in message and "the rows fit all_reduce on 4 ranks" in message
    assert read_bundled_log("C06", num_ranks=4).warning_codes() == []


# --- gpucomm bench's own table: one half blank where torch.distributed has no such call ------------------------

BENCH_COLLECTIVES = ("all_reduce", "broadcast", "all_gather", "send_recv")


def _bench_table(collective: str, num_ranks: int = 4, wrong_at: int | None = None) -> tuple[str, list[dict]]:
    """A ``gpucomm bench`` table for ``collective`` formatted by :mod:`gpucomm.measure.results` from made-up records.

    The placements measured and checked are the collective's spec's (what a real sweep fills in);
    times grow from 5 us to milliseconds so every printed width of nccl-tests' number format occurs.
    """
    from gpucomm.measure.config import CHUNKED_COLLECTIVES, PLACEMENTS
    from gpucomm.measure.results import SweepResults, format_table
    from gpucomm.measure.spec import get_spec

    spec = get_spec(collective)
    factor = busbw_factor(collective, num_ranks)
    op = "sum" if collective == "all_reduce" else "none"
    records = []
    for k, size in enumerate(8 * 4**i for i in range(14)):  # 8 B to 512 MiB
        halves = {}
        for p, placement in enumerate(PLACEMENTS):
            if placement not in spec.placements:
                halves[placement] = None
                continue
            time_s = 5e-6 + size / (110e9 + 7e9 * p) + 1e-7 * k
            checked = placement not in spec.unchecked
            wrong = (3 if k == wrong_at else 0) if checked else None
            halves[placement] = {"time_s": time_s, "algbw_bytes_per_s": size / time_s,
                                 "busbw_bytes_per_s": size / time_s * factor, "num_wrong": wrong,
                                 "num_wrong_ranks": None if wrong is None else int(wrong > 0)}
        records.append({"record": "result", "collective": collective, "msg_bytes": size, "count": size // 4,
                        "dtype": "float32", "op": op, "num_ranks": num_ranks,
                        "root": 0 if collective == "broadcast" else -1, **halves})
    meta = {"collective": collective, "num_ranks": num_ranks, "backend": "nccl", "dtype": "float32", "op": op,
            "min_bytes": 8, "max_bytes": 8 * 4**13, "step_factor": 4, "iters": 20, "warmup_iters": 5, "check": 1,
            "busbw_factor": factor, "placement_note": spec.placement_note or None}
    assert (collective in CHUNKED_COLLECTIVES) == (collective == "all_gather")
    return format_table(SweepResults(records, meta)), records


def _assert_read_back(log: ParsedLog, records: list[dict]) -> None:
    """Every measured half of ``records`` is one record of ``log`` with its printed numbers; a blank half is none."""
    from gpucomm.measure.config import PLACEMENTS

    for in_place, placement in zip((False, True), PLACEMENTS):
        read = log.in_place() if in_place else log.out_of_place()
        written = [(r["msg_bytes"], r[placement]) for r in records if r[placement] is not None]
        assert [r.size_bytes for r in read] == [size for size, _ in written], placement
        for r, (size, m) in zip(read, written):
            assert r.time_us == pytest.approx(m["time_s"] * 1e6, rel=1e-4, abs=0.0051), (placement, size)
            assert r.busbw_gbps == pytest.approx(m["busbw_bytes_per_s"] / 1e9, rel=1e-4, abs=0.0051), (placement, size)
            assert r.algbw_gbps == pytest.approx(m["algbw_bytes_per_s"] / 1e9, rel=1e-4, abs=0.0051), (placement, size)
            assert r.wrong == m["num_wrong"], (placement, size)


@pytest.mark.parametrize("collective", BENCH_COLLECTIVES)
def test_gpucomm_bench_table_reads_back_both_halves_where_measured(collective):
    """all_reduce and broadcast print a blank out-of-place half: read as not measured, never a cut row."""
    text, records = _bench_table(collective)
    log = parse_nccl_tests(text)
    _assert_read_back(log, records)
    m = log.metadata
    assert (m["collective"], m["collective_source"], m["num_ranks"], m["num_ranks_source"]) == \
        (collective, "gpucomm_header", 4, "gpucomm_header")
    assert (m["iters"], m["warmup_iters"], m["validation"]) == (20, 5, 1)
    assert m.get("not_measured") == ("out-of-place" if collective in ("all_reduce", "broadcast") else None)
    assert {"incomplete_row", "bad_row", "wrong", "contradiction"}.isdisjoint(log.warning_codes())


@pytest.mark.parametrize("collective", BENCH_COLLECTIVES)
def test_blank_half_is_placed_by_the_column_titles_without_the_note(collective):
    """The columns alone say which half is blank: the values end under the in-place titles."""
    text, records = _bench_table(collective)
    bare = "\n".join(line for line in text.splitlines() if "not measured" not in line)
    _assert_read_back(parse_nccl_tests(bare), records)


def test_blank_half_is_placed_by_a_full_row_without_titles():
    """No title line: a full row of the same table gives the columns' positions."""
    full, _ = _bench_table("send_recv")
    blank, records = _bench_table("all_reduce")
    rows = [line for line in blank.splitlines() if line.strip()[:1].isdigit()]
    log = parse_nccl_tests("\n".join([next(line for line in full.splitlines() if line.strip()[:1].isdigit())] + rows),
                           collective="all_reduce", num_ranks=4)
    assert [r.size_bytes for r in log.in_place()] == [8] + [r["msg_bytes"] for r in records]
    assert [r.size_bytes for r in log.out_of_place()] == [8]


def test_a_blank_half_nothing_places_is_skipped_as_cut():
    """Rows with one half's columns, no note, no title and no full row: they cannot be placed, so not read."""
    text, _ = _bench_table("all_reduce")
    rows = "\n".join(line for line in text.splitlines() if line.strip()[:1].isdigit())
    with pytest.raises(GpucommError, match="print one half, and no '# out-of-place: not measured'"):
        parse_nccl_tests(rows)
    note = "# out-of-place: not measured, torch.distributed.all_reduce works in place only\n"
    assert len(parse_nccl_tests(note + rows).in_place()) == 14  # the note alone places them


def test_an_in_place_blank_needs_the_line_that_says_so():
    """Values under the out-of-place titles alone are a row cut after its first half; a note places them.

    nccl-tests never leaves the in-place half blank; ``# in-place: not measured`` says it is, and a note
    naming the other half contradicts the columns: those rows are not read.
    """
    text, records = _bench_table("send_recv")
    lines = text.splitlines()
    title = next(line for line in lines if line.startswith("#") and " size " in line)
    out_of_place_end = title.index("#wrong") + len("#wrong")
    cut = "\n".join(line[:out_of_place_end] if line.strip()[:1].isdigit() else line for line in lines)
    with pytest.raises(GpucommError, match="14 line\\(s\\) looked like cut rows"):
        parse_nccl_tests(cut)
    log = parse_nccl_tests("# in-place: not measured\n" + cut)
    assert [r.size_bytes for r in log.out_of_place()] == [r["msg_bytes"] for r in records] and log.in_place() == []
    assert log.metadata["not_measured"] == "in-place"
    with pytest.raises(GpucommError, match="cut rows"):
        parse_nccl_tests("# out-of-place: not measured\n" + cut)


def test_gpucomm_bench_wrong_rows_keep_their_count():
    """A row with wrong elements ends in WRONG in gpucomm bench's table: the count is read, the mark skipped."""
    text, records = _bench_table("all_reduce", wrong_at=7)
    assert text.count("WRONG") == 1
    log = parse_nccl_tests(text)
    _assert_read_back(log, records)
    assert "wrong" in log.warning_codes() and "bad_row" not in log.warning_codes()


def test_nccl_tests_trace_replay_null_body():
    """nccl-tests' own blank half: 32 spaces for the out-of-place body (writeBenchMarkLineNullBody, src/util.cu)."""
    preamble = f"{2**20:12d}  {2**18:12d}  {'float':>8}  {'sum':>6}  {-1:6d}"
    row = preamble + " " * 32 + f"  {'40.00':>7}  {'26.21':>6}  {'26.21':>6}  {0:6d}"
    log = parse_nccl_tests(HEADER + row + "\n# Avg bus bandwidth : 26.21\n")
    assert log.out_of_place() == [] and [(r.size_bytes, r.time_us, r.busbw_gbps) for r in log.in_place()] == \
        [(2**20, 40.0, 26.21)]


def test_gpucomm_bench_round_trip_through_gpucomm_parse(tmp_path):
    """A real 2-rank gloo sweep: the table ``gpucomm bench`` prints is what ``gpucomm parse`` reads back."""
    import json
    import subprocess
    import sys

    pytest.importorskip("torch")
    from gpucomm.measure.config import PLACEMENTS
    from gpucomm.measure.results import placement_record, read_results

    out = tmp_path / "ar.jsonl"
    bench = subprocess.run([sys.executable, "-m", "gpucomm", "bench", "--ranks", "2", "--backend", "gloo", "-b", "8",
                            "-e", "64K", "-f", "4", "-n", "3", "-w", "1", "--out", str(out), "--no-progress"],
                           capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stderr
    table = tmp_path / "ar.txt"
    table.write_text(bench.stdout)
    parse = subprocess.run([sys.executable, "-m", "gpucomm", "parse", "--json", str(table)], capture_output=True,
                           text=True, timeout=120)
    assert parse.returncode == 0, parse.stderr
    meta, *rows = [json.loads(line) for line in parse.stdout.splitlines()]
    assert (meta["collective"], meta["num_ranks"]) == ("all_reduce", 2)
    written = read_results(out)
    assert [r["msg_bytes"] for r in rows] == [r["msg_bytes"] for r in written] == [8 * 4**i for i in range(7)]
    for row, record in zip(rows, written):
        for placement in PLACEMENTS:
            read, measured = placement_record(row, placement), placement_record(record, placement)
            assert (read is None) == (measured is None) == (placement == "out_of_place")  # in place only
            if measured is not None:
                assert read["time_s"] == pytest.approx(measured["time_s"], rel=1e-3, abs=6e-9)
                assert read["busbw_bytes_per_s"] == pytest.approx(measured["busbw_bytes_per_s"], rel=1e-3, abs=6e6)
                assert read["num_wrong"] == measured["num_wrong"] == 0
