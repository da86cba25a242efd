"""The shape every verb shares: one module per verb, ``register``/``run``, one error line, light imports."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpucomm.cli
from gpucomm import GpucommError
from gpucomm.cli import VERBS, build_parser, main
from gpucomm.cli.common import int_arg, one_line, print_error, size_arg

CLI_DIR = Path(gpucomm.cli.__file__).parent


def test_every_verb_module_is_listed_and_every_listed_verb_has_a_module():
    on_disk = {p.stem for p in CLI_DIR.glob("*.py")} - {"__init__", "__main__", "common"}
    assert set(VERBS) == on_disk
    assert len(VERBS) == len(set(VERBS))


@pytest.mark.parametrize("verb", VERBS)
def test_each_verb_registers_its_own_run(verb):
    module = importlib.import_module(f"gpucomm.cli.{verb}")
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers(dest="command")
    assert module.register(subparsers) is None
    assert set(subparsers.choices) == {verb}
    assert subparsers.choices[verb].get_default("func") is module.run


def test_help_lists_every_verb_in_order_with_its_help():
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(subparsers.choices) == list(VERBS)
    text = parser.format_help()
    assert "{" + ",".join(VERBS) + "}" in text
    assert all(h.help for h in subparsers._choices_actions)


def test_help_and_version_return_0(capsys):
    assert main(["--help"]) == 0
    assert "cost" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("gpucomm ")
    assert main(["cost", "--help"]) == 0


@pytest.mark.parametrize("argv, prefix", [
    ([], "gpucomm: error: "),
    (["nope"], "gpucomm: error: "),
    (["cost", "all_reduce", "--link", "nvlink4", "--gpus", "1", "--size", "1MiB"], "gpucomm cost: error: "),
    (["cost", "all_reduce", "--link", "nvlink9", "--gpus", "8", "--size", "1MiB"], "gpucomm cost: error: "),
    (["tp", "--model", "nope", "--tp", "2", "--tokens", "8", "--link", "nvlink4"], "gpucomm tp: error: "),
    (["fit", "/no/such/results.jsonl"], "gpucomm fit: error: "),
    (["parse", "/no/such/log.txt"], "gpucomm parse: error: "),
    (["bench", "-f", "-1"], "gpucomm bench: error: "),
    (["copybw", "-n", "0"], "gpucomm copybw: error: "),
])
def test_bad_input_is_one_line_with_the_verbs_prefix_and_status_2(capsys, argv, prefix):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(prefix), err


def test_a_negative_value_reaches_validation(capsys):
    assert main(["cost", "all_reduce", "--link", "nvlink4", "--gpus", "8", "--size", "-5MiB"]) == 2
    err = capsys.readouterr().err
    assert "-5MiB" in err and "expected one argument" not in err


@pytest.mark.parametrize("target", ["cost", "cost --json", "tp", "validate --json", "--help", "parse", "diagnose"])
def test_model_verbs_load_no_heavy_library(fresh_process, target):
    # one fresh interpreter for every such check (tests/conftest.py FRESH_TARGETS)
    ran = fresh_process[target]
    assert ran.code == 0 and ran.heavy() == [], ran.stderr


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_module_imports_light(fresh_process, verb):
    ran = fresh_process[f"verb {verb}"]
    assert f"gpucomm.cli.{verb}" in ran.modules and ran.heavy() == [], ran.stderr


@pytest.mark.parametrize("verb, message", [
    ("bench", "gpucomm bench: error: 'gpucomm bench' needs PyTorch: pip install torch"),
    ("copybw", "gpucomm copybw: error: copy bandwidth needs PyTorch: pip install torch"),
])
def test_measuring_verbs_without_torch_say_so_in_one_line(fresh_process, verb, message):
    ran = fresh_process[f"{verb} without torch"]
    assert ran.code == 2 and ran.stderr.strip() == message and ran.stdout == ""


def test_a_reader_that_leaves_early_is_not_an_error(tmp_path):
    from gpucomm.measure.logs.nccl_tests import bundled_log_text

    log = tmp_path / "long.log"
    log.write_text(bundled_log_text("C08") * 50)  # hundreds of kilobytes of JSON lines: more than a pipe holds
    proc = subprocess.Popen([sys.executable, "-m", "gpucomm", "parse", str(log), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert json.loads(proc.stdout.readline())["record"] == "meta"
    proc.stdout.close()  # as `| head -1` does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in err and b"BrokenPipe" not in err, err


def test_a_reader_that_leaves_a_table_early_is_not_an_error():
    # rich answers a closed pipe with SystemExit(1) unless told otherwise (`gpucomm validate --all | head -1`)
    proc = subprocess.Popen([sys.executable, "-m", "gpucomm", "validate", "--all"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    assert proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in err and b"BrokenPipe" not in err, err


def test_results_files_record_the_command_as_typed(tmp_path, capsys):
    from gpucomm.measure.logs.nccl_tests import bundled_log_text

    log = tmp_path / "c04.txt"
    log.write_text(bundled_log_text("C04"))
    assert main(["parse", str(log), "--json"]) == 0
    meta = json.loads(capsys.readouterr().out.splitlines()[0])
    assert meta["argv"] == ["gpucomm", "parse", str(log), "--json"]


def test_int_arg_names_the_value_and_the_range():
    assert int_arg("number of GPUs", 2)("8") == 8
    with pytest.raises(argparse.ArgumentTypeError, match="number of GPUs 1 is out of range: expected an integer >= 2"):
        int_arg("number of GPUs", 2)("1")
    with pytest.raises(argparse.ArgumentTypeError, match="--gpus 'x' is not an integer: expected an integer >= 1"):
        int_arg("--gpus", 1)("x")
    assert size_arg("64MiB") == 64 * 2**20
    with pytest.raises(argparse.ArgumentTypeError):
        size_arg("12parsecs")


def test_print_error_is_one_line_and_returns_the_status(capsys):
    assert print_error("fit", GpucommError("bad row\n  at line 3"), status=1) == 1
    assert capsys.readouterr().err == "gpucomm fit: error: bad row at line 3\n"
    assert one_line("a\tb\n\nc") == "a b c"


def test_one_definition_of_each_helper():
    """Argument types, the error line, the JSON line and the rich table live in cli/common.py only."""
    package = CLI_DIR.parent
    for path in package.rglob("*.py"):
        text = path.read_text()
        where = path.relative_to(package)
        if path.parent != CLI_DIR:  # the model, measurement and figure layers read no command line
            assert "import argparse" not in text, where
        elif path.name != "common.py":
            for helper in ("def _positive_int", "def int_arg", "def size_arg", "json.dumps(", "Console(", "print(f\"gpucomm"):
                assert helper not in text, f"{where} has its own {helper!r}: use gpucomm.cli.common"
