"""``gpucomm parse``: nccl-tests logs -> gpucomm bench's results records, one-line errors, no torch."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from gpucomm.cli import build_parser, main
from gpucomm.cli.parse import register
from gpucomm.measure.nccl_tests_results import log_to_results
from gpucomm.measure.nccl_tests_log import bundled_log_names, bundled_log_text, read_bundled_log
from gpucomm.measure.results import read_results

LOGS = bundled_log_names()
RESULT_FIELDS = {"record", "collective", "msg_bytes", "count", "dtype", "op", "num_ranks", "iters", "warmup_iters",
                 "time_s", "algbw_bytes_per_s", "busbw_bytes_per_s", "num_wrong"}


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
    out_file = tmp_path / "out" / f"{name}.jsonl"
    code, out, err = run(capsys, path, "--out", str(out_file))
    assert code == 0, err
    assert err == ""
    log = read_bundled_log(name)
    results = read_results(out_file)
    assert len(results) == len([r for r in log.in_place() if r.time_us])
    assert results.meta["tool"] == "gpucomm.parse" and results.meta["backend"] == "nccl"
    for r in results:
        assert RESULT_FIELDS <= set(r)
        assert r["time_s"] > 0 and r["busbw_bytes_per_s"] >= 0 and r["in_place"] is True
    # the table: one row per record, then the footer and one line per warning
    rows = [line for line in out.splitlines() if line and not line.startswith("#")]
    assert len(rows) == len(results)
    for w in log.warnings:
        assert f"# warning [{w.code}]:" in out
    assert f"# Results file       : {out_file}" in out


def test_records_match_the_log_and_fit_like_a_sweep():
    from gpucomm.model.fit import fit_sweep

    meta, rows = log_to_results(read_bundled_log("C08"))
    assert meta["num_ranks"] == 16 and meta["collective"] == "all_reduce" and meta["busbw_factor"] == 1.875
    assert meta["iters"] == 20 and meta["warmup_iters"] == 5 and meta["check"] is True
    assert rows[0]["msg_bytes"] == 8 and rows[-1]["msg_bytes"] == 8 * 2**30
    assert [r["msg_bytes"] for r in rows] == sorted(r["msg_bytes"] for r in rows)
    fit = fit_sweep(rows)  # a published log fits exactly as a sweep of one's own does
    assert fit.num_ranks == 16 and fit.busbw_bytes_per_s > 100e9
    oop_meta, oop = log_to_results(read_bundled_log("C04"), in_place=False)
    assert oop_meta["placement"] == "out-of-place" and oop[2]["busbw_bytes_per_s"] == pytest.approx(232.81e9)


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


def test_overrides_for_a_log_that_does_not_say(tmp_path, capsys):
    path = write_log(tmp_path, "c28.txt", bundled_log_text("C28"))
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


def test_gpucomm_parse_as_a_command(tmp_path):
    """Through ``python -m gpucomm parse``: exit status and the one-line error as a user sees them."""
    garbage = write_log(tmp_path, "garbage.txt", "not a log\n")
    out = subprocess.run([sys.executable, "-m", "gpucomm", "parse", garbage], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("gpucomm parse: error: ")
    good = subprocess.run([sys.executable, "-m", "gpucomm", "parse", write_log(tmp_path, "c04.txt",
                                                                                   bundled_log_text("C04"))],
                          capture_output=True, text=True)
    assert good.returncode == 0 and "[in_place_outlier]" in good.stdout


def test_parse_module_imports_no_torch_or_plotly():
    code = ("import sys, gpucomm.cli.parse\n"
            "print(sorted(m for m in ('torch', 'plotly', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
