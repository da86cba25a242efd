"""The parser findings of issue 24 (valid logs refused, wrong labels, inconsistent inputs not flagged), one test each.

Every test here failed on main a71e2e1. The logs come from the corpus (``tests/data/nccl_tests``: ``real_*`` copied
from public threads, ``constructed_*`` made for the case, each said so on its first line) or are built here from
them; ``test_nccl_tests_corpus.py`` checks every record of every corpus log, this file the point of each finding.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpucomm import GpucommError
from gpucomm.cli import main
from gpucomm.measure.logs.files import read_log_text
from gpucomm.measure.logs.nccl_tests import parse_nccl_tests, parse_nccl_tests_runs
from gpucomm.measure.logs.nccl_tests_json import parse_nccl_tests_json, parse_nccl_tests_json_runs
from gpucomm.measure.logs.nccl_tests_layouts import split_fused
from gpucomm.measure.logs.nccl_tests_results import format_log_table, log_to_results

CORPUS = Path(__file__).resolve().parents[1] / "data" / "nccl_tests"


def corpus(name: str) -> str:
    return (CORPUS / name).read_text()


def rows_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


# --- valid logs refused -----------------------------------------------------------------------------------------

def test_rank_markers_fused_inside_rows_are_removed():
    """'... -1[0]    55.30 ...': before, that row was a bad_row and its size was lost."""
    log = parse_nccl_tests(corpus("constructed_fused_rank_markers.txt"))
    assert "-1[0]" in corpus("constructed_fused_rank_markers.txt")
    assert [r.size_bytes for r in log.in_place()] == [1 << 20, 2 << 20, 4 << 20, 8 << 20]
    assert "bad_row" not in log.warning_codes()
    assert log.in_place()[1].time_us == 55.85  # the values after the marker, in their columns


def test_timestamp_column_of_S1_is_read():
    log = parse_nccl_tests(corpus("constructed_timestamps_S1.txt"))
    assert len(log.records) == 8 and log.warning_codes() == []
    assert [r.timestamp for r in log.in_place()] == [f"2026-05-01 10:00:{k:02d}" for k in range(4)]
    assert log.in_place()[3].busbw_gbps == 110.19


def test_per_iteration_columns_of_I1_are_read_into_the_records():
    log = parse_nccl_tests(corpus("constructed_per_iteration_I1.txt"))
    first = log.out_of_place()[0]
    assert (first.time_us, first.busbw_gbps, first.wrong) == (40.10, 45.76, 0)
    assert (first.iter_min_us, first.iter_max_us, first.iter_p99_us, first.iter_cv_pct) == (38.90, 48.12, 46.11, 4.20)
    _, records = log_to_results(log)
    assert records[0]["in_place"]["iter_max_s"] == pytest.approx(48.60e-6)
    assert records[0]["iter_min_s"] == pytest.approx(39.29e-6)  # the in-place one is at the top level


def test_gpucomm_bench_per_iteration_table_is_read():
    """gpucomm bench -I 1's own table: in-place only, with its i_* columns under their titles."""
    text = corpus("constructed_gpucomm_bench_gloo_I1.txt")
    log = parse_nccl_tests(text)
    assert len(log.in_place()) == len(rows_of(text)) == 8 and log.out_of_place() == []
    last = log.in_place()[-1]
    assert (last.time_us, last.iter_min_us, last.iter_max_us, last.iter_p99_us, last.iter_cv_pct) == \
        (139.23, 125.30, 194.92, 180.99, 4.90)


def test_buffer_registration_of_R_is_recorded_as_the_run_had_it():
    text = corpus("constructed_register_R2.txt")
    assert parse_nccl_tests(text).metadata["buffer_registration"] == "local"  # NCCL 2.26 fell back, and said so
    without_note = "\n".join(line for line in text.splitlines() if not line.startswith("Option -R"))
    log = parse_nccl_tests(without_note)
    assert log.metadata["buffer_registration"] == "symmetric" and len(log.records) == 8


def test_two_json_files_concatenated_are_two_runs_without_a_cut_warning():
    text = corpus("constructed_two_json_concatenated.json")
    runs = parse_nccl_tests_json_runs(text)
    assert [r.metadata["num_ranks"] for r in runs] == [8, 4]
    assert [r.metadata["date"] for r in runs] == ["2026-05-01 10:00:00", "2026-05-01 10:05:00"]
    assert all("json_cut" not in r.warning_codes() for r in runs)
    merged = parse_nccl_tests_json(text)
    assert "several_runs" in merged.warning_codes() and "json_cut" not in merged.warning_codes()
    # a second object cut short is still said to be cut, with the first object read whole
    cut = text[:text.rindex('"out_of_bounds"')]
    runs = parse_nccl_tests_json_runs(cut)
    assert len(runs) == 2 and runs[1].warning_codes()[0] == "json_cut" and "json_cut" not in runs[0].warning_codes()


def test_json_v3_per_iteration_statistics_are_read():
    doc = json.loads(corpus("constructed_json_v3_per_iteration.json"))
    log = parse_nccl_tests_json(json.dumps(doc))
    r = log.in_place()[1]
    stats = doc["results"][1]["in_place_per_iter"]
    assert (r.iter_min_us, r.iter_p50_us, r.iter_p99_us, r.iter_max_us, r.iter_mean_us, r.iter_stdev_us, r.iter_cv_pct) == \
        tuple(stats[k] for k in ("min_us", "p50_us", "p99_us", "max_us", "avg_us", "stdev_us", "cv_pct"))
    _, records = log_to_results(log)
    assert records[1]["in_place"]["iter_p50_s"] == pytest.approx(stats["p50_us"] * 1e-6)


# --- wrong labels ------------------------------------------------------------------------------------------------

def test_a_gpucomm_bench_table_keeps_its_backend_and_timing(tmp_path, capsys):
    """Before: backend nccl and 'average over ranks', and fit dropped its 'measured with gloo' caveat."""
    log = parse_nccl_tests(corpus("constructed_gpucomm_bench_gloo.txt"))
    meta, _ = log_to_results(log)
    assert (meta["backend"], meta["source_tool"], meta["time_over_ranks"]) == ("gloo", "gpucomm.bench", "max")
    assert "maximum over ranks" in meta["timing"] and "average" not in meta["timing"]
    out = tmp_path / "parsed.jsonl"
    assert main(["parse", str(CORPUS / "constructed_gpucomm_bench_gloo.txt"), "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert "# time: the maximum over ranks (-a 3)" in table
    assert main(["fit", str(out), "--link", "nvlink4", "--gpus", "8"]) == 0
    assert "# caveat: measured with backend gloo" in capsys.readouterr().out


def test_nccl_tests_average_flag_of_the_command_is_the_timing():
    text = corpus("constructed_env_after_binary.txt").replace("-f 2 NCCL_P2P_DISABLE=1", "-f 2 -a 3")
    meta, _ = log_to_results(parse_nccl_tests(text))
    assert meta["time_over_ranks"] == "max" and "the command's -a" in meta["timing"]


def test_the_legacy_error_column_is_not_shown_as_check_off():
    """validation 1 with an error column: the footer says what the error column is, never 'N/A (check off)'."""
    for name in ("real_nccl258_legacy_error.txt", "constructed_legacy_validation_failed.txt"):
        meta, records = log_to_results(parse_nccl_tests(corpus(name)))
        table = format_log_table(meta, records, name)
        assert "check off" not in table, name
    meta, records = log_to_results(parse_nccl_tests(corpus("real_nccl258_legacy_error.txt")))
    footer = next(line for line in format_log_table(meta, records, "x").splitlines() if "Out of bounds" in line)
    assert "largest deviation, 1e-07 (nccl-tests' bound 3e-05): OK" in footer  # float on 4 ranks: 1e-5 x 3


def test_the_footer_reprint_keeps_the_logs_count_of_values():
    """'5 FAILED' in the log (values) stays 5, not the 1 row that has a wrong value."""
    meta, records = log_to_results(parse_nccl_tests(corpus("constructed_legacy_validation_failed.txt")))
    footer = [line for line in format_log_table(meta, records, "x").splitlines() if line.startswith("# Out of bounds")]
    assert footer == ["# Out of bounds values : 5 FAILED (as the log prints it)"]


def test_fused_numbers_are_split_where_nccl_tests_ends_the_first():
    assert split_fused("8 2 float sum -1 10.4012905.60 2 0 3 4 5 0".split(), 13)[5:7] == ["10.40", "12905.60"]
    log = parse_nccl_tests(corpus("constructed_column_collision.txt"))
    big = log.out_of_place()[-1]
    assert (big.time_us, big.algbw_gbps, big.busbw_gbps, big.wrong) == (12905.6, 10.40, 18.20, 0)
    assert not {"bad_row", "incomplete_row"} & set(log.warning_codes())


# --- inconsistent inputs flagged ----------------------------------------------------------------------------------

def test_busbw_over_algbw_that_contradicts_the_device_list_is_flagged():
    log = parse_nccl_tests(corpus("constructed_ratio_contradicts_ranks.txt"))
    message = next(w.message for w in log.warnings if w.code == "inconsistent_shape")
    assert "is 1.5" in message and "all_reduce on 8 ranks (from the device list)" in message
    assert "the rows fit all_reduce on 4 ranks" in message


def test_size_that_is_not_count_times_type_size_is_flagged():
    log = parse_nccl_tests(corpus("constructed_size_not_count.txt"))
    message = next(w.message for w in log.warnings if w.code == "size_mismatch")
    assert "4194304 B, count 524288 float" in message


def test_shuffled_sizes_stay_one_run_and_are_flagged():
    text = corpus("constructed_shuffled_sizes.txt")
    runs = parse_nccl_tests_runs(text)
    assert len(runs) == 1 and "unordered_sizes" in runs[0].warning_codes()
    assert len(runs[0].records) == 8


def test_a_size_repeated_later_in_the_sweep_is_flagged():
    """A size measured again after larger ones: before, the log was split there into two runs without a word."""
    text = corpus("real_nccltests119_step_bytes.txt")
    rows = rows_of(text)
    repeated = text.replace(rows[5], rows[5] + "\n" + rows[2])
    runs = parse_nccl_tests_runs(repeated)
    assert len(runs) == 1
    assert {"unordered_sizes", "duplicate_size"} <= set(runs[0].warning_codes())


def test_an_nccl_variable_after_the_binary_is_warned():
    log = parse_nccl_tests(corpus("constructed_env_after_binary.txt"))
    message = next(w.message for w in log.warnings if w.code == "env_after_binary")
    assert message.startswith("NCCL_P2P_DISABLE=1 written after the nccl-tests binary")
    before = corpus("constructed_env_after_binary.txt").replace(
        "mpirun -np 8 ./build/all_reduce_perf -b 1M -e 8M -f 2 NCCL_P2P_DISABLE=1",
        "mpirun -np 8 -x NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 1M -e 8M -f 2")
    log = parse_nccl_tests(before)
    assert "env_after_binary" not in log.warning_codes() and log.metadata["env"] == {"NCCL_P2P_DISABLE": "1"}


def test_utf16_logs_are_read_and_gzip_logs_get_a_hint(tmp_path):
    text = corpus("real_nccltests119_step_bytes.txt")
    utf16 = tmp_path / "powershell.log"
    utf16.write_bytes(text.encode("utf-16"))  # with its byte-order mark, as PowerShell's '>' writes
    assert len(parse_nccl_tests(read_log_text(str(utf16))).records) == 22
    packed = tmp_path / "run.log.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(GpucommError, match=r"gzip-compressed: decompress it first \(zcat .*run.log.gz"):
        read_log_text(str(packed))
    bare = tmp_path / "nobom.log"
    bare.write_bytes(text.encode("utf-16-le"))
    with pytest.raises(GpucommError, match="UTF-16 text without a byte-order mark"):
        read_log_text(str(bare))
