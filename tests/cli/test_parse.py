"""``gpucomm parse``: nccl-tests logs -> gpucomm bench's results records, one-line errors, no torch."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from gpucomm.cli import build_parser, main
from gpucomm.cli.parse import register
from gpucomm.measure.logs.nccl_tests import bundled_log_names, bundled_log_text, read_bundled_log
from gpucomm.measure.logs.nccl_tests_results import log_to_results, primary_records
from gpucomm.measure.results import MEASUREMENT_KEYS, read_results

LOGS = bundled_log_names()
RESULT_FIELDS = {"record", "collective", "msg_bytes", "count", "dtype", "op", "num_ranks", "iters", "warmup_iters",
                 "time_s", "algbw_bytes_per_s", "busbw_bytes_per_s", "num_wrong", "placement", "root",
                 "out_of_place", "in_place"}


def write_log(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(capsys, *argv):
    code = main(["parse", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_bundled_logs_are_there():
    assert {"C01", "C04", "C08", "C28", "C29"} <= set(LOGS)


@pytest.mark.parametrize("name", LOGS)
def test_every_bundled_log_parses(tmp_path, capsys, name):
    path = write_log(tmp_path, f"{name}.txt", bundled_log_text(name))
    (tmp_path / "out").mkdir()
    out_file = tmp_path / "out" / f"{name}.jsonl"
    code, out, err = run(capsys, path, "--out", str(out_file))
    assert code == 0, err
    assert err == ""
    log = read_bundled_log(name)
    results = read_results(out_file)
    assert len(results) == len({(r.size_bytes, r.line) for r in log.records if r.time_us})  # one per printed row
    assert results.meta["tool"] == "gpucomm.parse" and results.meta["backend"] == "nccl"
    assert results.meta["placement"] == "in_place"
    timed = sum(r[p] is not None for r in results for p in ("out_of_place", "in_place"))
    assert timed == len([r for r in log.records if r.time_us])  # both placements are kept
    for r in results:
        assert RESULT_FIELDS <= set(r) and r["placement"] in ("out_of_place", "in_place")
        assert r["time_s"] > 0 and r["busbw_bytes_per_s"] >= 0 and r["time_s"] == r[r["placement"]]["time_s"]
        assert all(h is None or set(h) == set(MEASUREMENT_KEYS) for h in (r["out_of_place"], r["in_place"]))
    assert len(primary_records(results.meta, list(results))) == len([r for r in log.in_place() if r.time_us])
    # the table: one row per size with both placements, then the footer and one line per warning
    rows = [line for line in out.splitlines() if line and not line.startswith("#")]
    assert len(rows) == len(results)  # a size printed twice (S08's two 0 B rows) is two rows
    last = log.in_place()[-1]
    assert rows[-1].split()[-3:] == [f"{last.algbw_gbps:.2f}", f"{last.busbw_gbps:.2f}",
                                     "N/A" if last.wrong is None else str(last.wrong)]
    for w in log.warnings:
        assert f"# warning [{w.code}]:" in out
    assert f"# Results file       : {out_file}" in out


def test_records_match_the_log_and_fit_like_a_sweep():
    from gpucomm.model.fit import fit_sweep

    meta, rows = log_to_results(read_bundled_log("C08"))
    assert meta["num_ranks"] == 16 and meta["collective"] == "all_reduce" and meta["busbw_factor"] == 1.875
    assert meta["iters"] == 20 and meta["warmup_iters"] == 5 and meta["check"] is True
    assert meta["placements"] == ["out_of_place", "in_place"] and meta["placement_note"] is None
    assert len(rows) == 31 and {r["placement"] for r in rows} == {"in_place"} and primary_records(meta, rows) == rows
    assert rows[0]["msg_bytes"] == 8 and rows[-1]["msg_bytes"] == 8 * 2**30
    assert [r["msg_bytes"] for r in rows] == sorted(r["msg_bytes"] for r in rows)
    fit = fit_sweep(rows)  # a published log fits exactly as a sweep of one's own does
    assert fit.num_ranks == 16 and fit.busbw_bytes_per_s > 100e9
    oop_meta, oop = log_to_results(read_bundled_log("C04"), in_place=False)
    assert oop_meta["placement"] == "out_of_place" and {r["placement"] for r in oop} == {"out_of_place"}
    assert oop[2]["busbw_bytes_per_s"] == pytest.approx(232.81e9) and oop[2]["in_place"]["busbw_bytes_per_s"] == \
        pytest.approx(164.13e9)


def test_json_lines_equal_the_results_file(tmp_path, capsys):
    path = write_log(tmp_path, "c04.txt", bundled_log_text("C04"))
    out_file = tmp_path / "c04.jsonl"
    code, out, _ = run(capsys, path, "--json", "--out", str(out_file))
    assert code == 0
    printed = [json.loads(line) for line in out.splitlines()]
    stored = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert printed == stored
    assert printed[0]["argv"] == ["gpucomm", "parse", path, "--json", "--out", str(out_file)]  # as typed
    assert printed[0]["record"] == "meta" and {r["record"] for r in printed[1:]} == {"result"}


def test_standard_input(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bundled_log_text("C29").encode())))
    code, out, _ = run(capsys, "-")
    assert code == 0 and "parsed standard input" in out and "[stopped_early]" in out


def test_overrides_for_a_log_that_does_not_say(tmp_path, capsys, shapeless_log):
    path = write_log(tmp_path, "shapeless.txt", shapeless_log)
    code, out, _ = run(capsys, path)
    assert code == 0 and "[unknown_shape]" in out
    code, out, _ = run(capsys, path, "--collective", "all_reduce", "--ranks", "2", "--json")
    meta = json.loads(out.splitlines()[0])
    assert meta["num_ranks"] == 2 and meta["collective"] == "all_reduce" and meta["busbw_factor"] == 1.0


def test_wrong_results_exit_1(tmp_path, capsys):
    text = bundled_log_text("C04").replace("224.84      0", "224.84     17", 1)
    code, out, err = run(capsys, write_log(tmp_path, "wrong.txt", text))
    assert code == 1
    assert "# warning [wrong]:" in out


@pytest.mark.parametrize("content", [
    "hello world\nthis is not a log\n",
    "",
    "#  size count type\n# only comments\n",
    b"\x7fELF\x00\x00\x01binary",
])
def test_garbage_exits_2_with_one_line(tmp_path, capsys, content):
    path = tmp_path / "garbage.txt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    code, out, err = run(capsys, str(path))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("gpucomm parse: error: ")


@pytest.mark.parametrize("argv, match", [
    (["/no/such/log.txt"], "cannot read log '/no/such/log.txt': No such file or directory"),
    (["."], "Is a directory"),
    (["log.txt", "--ranks", "0"], "number of ranks 0 is out of range"),
    (["log.txt", "--collective", "allreduce"], "invalid choice"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, match):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and match in err


def test_registers_on_any_subparsers(tmp_path, capsys):
    """``register(subparsers)`` as every verb module has it: the parser's ``func`` runs the verb."""
    parser = argparse.ArgumentParser(prog="gpucomm")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["parse", write_log(tmp_path, "c01.txt", bundled_log_text("C01"))])
    assert args.func(args) == 0
    assert "47.39" in capsys.readouterr().out
    assert build_parser().parse_args(["parse", "x"]).log == "x"  # and gpucomm's parser has it


def test_gpucomm_parse_as_a_command(tmp_path, gpucomm):
    """Through the command's ``main``: exit status and the one-line error as a user sees them."""
    garbage = write_log(tmp_path, "garbage.txt", "not a log\n")
    out = gpucomm("parse", garbage)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("gpucomm parse: error: ")
    good = gpucomm("parse", write_log(tmp_path, "c04.txt", bundled_log_text("C04")))
    assert good.returncode == 0 and "[in_place_outlier]" in good.stdout


def test_parse_module_imports_no_torch_or_plotly(fresh_process):
    assert fresh_process["verb parse"].heavy(("torch", "plotly", "ipywidgets")) == []
    assert fresh_process["parse"].code == 0 and fresh_process["parse"].heavy() == []


# --- what a new user met with real logs ----------------------------------------------------------------------

def test_out_in_a_missing_folder_is_refused_before_any_work(tmp_path, capsys):
    """Before: the folders were created (at the filesystem root for /nonexistent/...)."""
    target = tmp_path / "nonexistent" / "dir" / "x.jsonl"
    for log in (write_log(tmp_path, "c04.txt", bundled_log_text("C04")), str(tmp_path / "missing.log")):
        code, out, err = run(capsys, log, "--out", str(target))
        assert code == 2 and out == ""
        assert err.strip() == (f"gpucomm parse: error: --out {str(target)!r}: folder {str(target.parent)!r} does not "
                               "exist: expected a file in an existing folder (create it first)")
    assert not (tmp_path / "nonexistent").exists()
    code, _, err = run(capsys, write_log(tmp_path, "c04.txt", bundled_log_text("C04")), "--out", str(tmp_path))
    assert code == 2 and "is not a file name" in err
    code, _, err = run(capsys, write_log(tmp_path, "c04.txt", bundled_log_text("C04")), "--out",
                       str(tmp_path / "c04.txt" / "x.jsonl"))
    assert code == 2 and "c04.txt' is a file, not a folder" in err


GOLDEN = Path(__file__).parents[1] / "data" / "bench"


def two_runs(tmp_path) -> str:
    return write_log(tmp_path, "two.txt", bundled_log_text("C06") + "\n" + bundled_log_text("C04"))


def test_two_runs_print_two_sweeps_and_write_one_file_each(tmp_path, capsys):
    code, out, _ = run(capsys, two_runs(tmp_path), "--out", str(tmp_path / "r.jsonl"))
    assert code == 0
    assert out.count("# parsed ") == 2 and "(run 1 of 2, result rows at lines 6-9)" in out
    assert "(run 2 of 2, result rows at lines 19-22)" in out
    assert "# 2 runs in " in out and "select one with --run N (1 to 2)" in out
    first, second = read_results(tmp_path / "r.run1.jsonl"), read_results(tmp_path / "r.run2.jsonl")
    assert (first.meta["run"], second.meta["run"]) == (1, 2) and not (tmp_path / "r.jsonl").exists()
    assert first[-1]["busbw_bytes_per_s"] == pytest.approx(370.75e9)
    assert second[-1]["busbw_bytes_per_s"] == pytest.approx(234.74e9)


def test_run_selects_one_and_out_of_range_is_one_line(tmp_path, capsys):
    code, out, _ = run(capsys, two_runs(tmp_path), "--run", "2", "--json", "--out", str(tmp_path / "r.jsonl"))
    printed = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and printed[0]["run"] == 2 and printed[0]["command"].endswith("-g 4")
    assert read_results(tmp_path / "r.jsonl").meta["run"] == 2
    code, out, err = run(capsys, two_runs(tmp_path), "--run", "3", "--out", str(tmp_path / "s.jsonl"))
    assert code == 2 and out == "" and not (tmp_path / "s.jsonl").exists()
    assert err.strip().endswith(f"--run 3 is out of range: log {str(tmp_path / 'two.txt')!r} holds 2 runs, expected 1 to 2")
    code, _, err = run(capsys, two_runs(tmp_path), "--run", "0")
    assert code == 2 and "--run 0 is out of range: expected an integer >= 1" in err


def test_nccl_tests_json_output_is_read(tmp_path, capsys):
    """C06's run as nccl-tests -J writes it (src/util.cu, v2.19.6: one device entry per process, -g 4)."""
    log = read_bundled_log("C06")
    half = {False: "out_of_place", True: "in_place"}
    results = {}
    for r in log.records:
        results.setdefault(r.size_bytes, {"size": r.size_bytes, "count": r.count, "type": r.type, "redop": r.redop,
                                          "root": f"{r.root:6d}"})[half[r.in_place]] = {
            "time": r.time_us, "alg_bw": r.algbw_gbps, "bus_bw": r.busbw_gbps, "nwrong": float(r.wrong)}
    doc = {"version": 3, "args": ["./build/all_reduce_perf", "-b", "1G", "-e", "8G", "-g", "4"], "nccl_version": 21805,
           "config": {"nthreads": 1, "ngpus": 4, "devices": [{"rank": 0, "hostname": "dgx", "device": 0}]},
           "results": list(results.values()), "average_bus_bandwidth": {"bandwidth": 369.941, "okay": "unchecked"}}
    code, out, _ = run(capsys, write_log(tmp_path, "ar.json", json.dumps(doc)))
    assert code == 0 and "NCCL 2.18.5, all_reduce (from the command line), 4 ranks (from the JSON output's device list" in out
    rows = [line for line in out.splitlines() if line and not line.startswith("#")]
    assert len(rows) == 4 and rows[-1].split()[-3:] == ["247.17", "370.75", "0"]


def test_both_placements_are_shown_and_kept(tmp_path, capsys):
    code, out, _ = run(capsys, write_log(tmp_path, "c04.txt", bundled_log_text("C04")), "--json")
    records = [json.loads(line) for line in out.splitlines()][1:]
    assert records[2]["msg_bytes"] == 4294967296 and records[2]["placement"] == "in_place"
    assert (records[2]["out_of_place"]["time_s"], records[2]["in_place"]["time_s"]) == \
        pytest.approx((27672e-6, 39252e-6))
    code, out, _ = run(capsys, write_log(tmp_path, "c04.txt", bundled_log_text("C04")))
    row = next(line for line in out.splitlines() if line.startswith("  4294967296"))
    assert row.split()[4:] == ["27672.00", "155.21", "232.81", "0", "39252.00", "109.42", "164.13", "0"]


def test_legacy_float_noise_is_not_wrong_results(tmp_path, capsys):
    """A legacy 'error' of 4e-07 under a footer that says OK: exit 0 (before: wrong results, exit 1)."""
    text = ("#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
            "   268435456      67108864   float     sum   2360.9  113.70  213.19  4e-07   2359.9  113.75  213.28  4e-07\n"
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 213.2\n")
    code, out, _ = run(capsys, write_log(tmp_path, "old.txt", text))
    assert code == 0 and "[error]" not in out


def test_contradicting_ranks_are_warned_and_partial_logs_say_inferred(tmp_path, capsys):
    code, out, _ = run(capsys, write_log(tmp_path, "c04.txt", bundled_log_text("C04")), "--ranks", "8")
    assert code == 0
    assert "# warning [contradiction]: the number of ranks given (8) contradicts the log: 4 (from the command line)" in out
    rows = "\n".join(line for line in bundled_log_text("C08").splitlines() if line.strip()[:1].isdigit())
    code, out, _ = run(capsys, write_log(tmp_path, "rows.txt", rows))
    assert "all_reduce (inferred from busbw/algbw), 16 ranks (inferred from busbw/algbw)" in out.splitlines()[0]
    assert "[unknown_shape]" not in out


# --- one results format: gpucomm parse of a gpucomm bench table writes what gpucomm bench wrote ---------------

@pytest.mark.parametrize("collective", ["all_reduce", "all_gather"])
def test_parse_of_a_bench_table_writes_the_records_bench_wrote(tmp_path, capsys, collective):
    """The same sweep, as ``gpucomm bench --out`` wrote it and as ``gpucomm parse`` reads its table: same keys.

    The table and the records are golden files of one real gloo sweep each (tests/data/README.md says how they were
    made); one small sweep run for real goes through the same round trip in tests/measure/test_nccl_tests_log.py.
    all_reduce has no out-of-place call in torch.distributed (that half is blank, ``out_of_place`` None);
    all_gather has both, and nccl-tests prints its count per rank (the records hold the whole buffer's).
    Before, parse wrote two records per size (``in_place`` true/false) where bench wrote one, and fit
    dropped every record of a bench file.
    """
    bench_file, table = GOLDEN / f"{collective}.jsonl", GOLDEN / f"{collective}.txt"
    bench = read_results(bench_file)
    for flags in ([], ["--out-of-place"]):
        parsed_file = tmp_path / f"parsed{len(flags)}.jsonl"
        code, _, err = run(capsys, str(table), "--out", str(parsed_file), *flags)
        assert code == 0, err
        parsed = read_results(parsed_file)
        assert len(parsed) == len(bench) == 4
        for b, p in zip(bench, parsed):
            assert list(p) == list(b)  # the same fields in the same order
            for half in ("out_of_place", "in_place"):
                assert (p[half] is None) == (b[half] is None)
                assert p[half] is None or list(p[half]) == list(b[half])
                if p[half] is not None:
                    # the table prints time in 7 characters as nccl-tests does (2 decimals of us while they fit, then
                    # 1, then none), so a loaded machine's slow iterations (>= 10 ms) lose digits
                    t = b[half]["time_s"]
                    digits = 0.005e-6 if t < 1e-2 else 0.05e-6 if t < 1e-1 else 0.5e-6
                    assert p[half]["time_s"] == pytest.approx(t, abs=digits * 1.01)
            same = ("record", "collective", "msg_bytes", "count", "dtype", "op", "num_ranks", "iters", "blocks",
                    "warmup_iters", "num_wrong", "root")
            assert {k: p[k] for k in same} == {k: b[k] for k in same}
        # bench's top level: out-of-place where torch has it; parse's: in-place unless --out-of-place
        # (all_reduce: in-place only, so in-place either way, as bench)
        assert {r["placement"] for r in parsed} == {"out_of_place" if flags and collective == "all_gather"
                                                    else "in_place"}
        assert {r["placement"] for r in bench} == {"out_of_place" if collective == "all_gather" else "in_place"}
    for results_file in (bench_file, parsed_file):
        code = main(["fit", str(results_file)])
        out, err = capsys.readouterr()
        assert code == 0 and err == "" and f"4 sizes from {results_file}" in out.splitlines()[0], (out, err)
