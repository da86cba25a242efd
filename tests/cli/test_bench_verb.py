"""``gpucomm bench`` as an nccl-tests user meets it: flags, refusals before any rank starts, Ctrl-C, the table.

The findings of trying the verb as a new user on a CPU machine, one test each; the runs are real
2-rank gloo groups with a few tiny sizes (a few seconds each).
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from gpucomm.cli import build_parser, main

torch = pytest.importorskip("torch")

BENCH = [sys.executable, "-m", "gpucomm", "bench"]


def config_of(*argv):
    from gpucomm.cli.bench import config_from_args

    return config_from_args(build_parser().parse_args(["bench", *argv, "--no-out"]))


def one_error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("gpucomm bench: error: ")
    return lines[0]


# --- --out: refused before any rank starts ------------------------------------------------------

@pytest.mark.parametrize("where", ["proc", "under_a_file", "a_folder"])
def test_out_that_cannot_be_written_is_one_line_before_any_rank_starts(where, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    out = {"proc": "/proc/gpucomm-bench.jsonl", "under_a_file": str(a_file / "r.jsonl"), "a_folder": str(tmp_path)}[where]
    start = time.monotonic()
    proc = subprocess.run([*BENCH, "--ranks", "2", "-e", "64", "--out", out], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpucomm bench: error: --out {out!r}"), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""  # no rank started: no table header either
    assert time.monotonic() - start < 60


# --- Ctrl-C ------------------------------------------------------------------------------------------

def test_ctrl_c_before_the_first_size_does_not_claim_a_results_file(tmp_path, monkeypatch, capsys):
    import json

    from gpucomm.measure import launch

    out = tmp_path / "ar.jsonl"

    def interrupted(config, num_ranks, reporter=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(launch, "launch_local", interrupted)
    assert main(["bench", "--ranks", "2", "--out", str(out)]) == 130
    line = one_error_line(capsys)
    assert line == "gpucomm bench: error: interrupted before the first size finished: no results file was written"
    out.write_text(json.dumps({"record": "meta"}) + "\n")
    assert main(["bench", "--ranks", "2", "--out", str(out), "--force"]) == 130  # an existing file needs --force
    assert one_error_line(capsys).endswith(f"interrupted before the first size finished: {out} holds the metadata only")

    def after_one_size(config, num_ranks, reporter=None):
        with open(config.out, "w") as f:
            f.write(json.dumps({"record": "meta"}) + "\n" + json.dumps({"record": "result", "msg_bytes": 8}) + "\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(launch, "launch_local", after_one_size)
    assert main(["bench", "--ranks", "2", "--out", str(out), "--force"]) == 130
    assert one_error_line(capsys).endswith(f"interrupted; finished sizes are in {out} (1 size)")


# --- nccl-tests flags ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, hint", [
    (["-t", "4"], "-t 4 (nccl-tests --nthreads) is not supported by gpucomm bench: each rank is its own process: "
                  "expected --ranks N for N local ranks, or torchrun --nproc-per-node N"),
    (["-g", "8"], "-g 8 (nccl-tests --ngpus) is not supported by gpucomm bench: each rank drives one GPU: expected "
                  "--ranks N (one process per GPU), or torchrun --nproc-per-node N"),
    (["-C", "1"], "-C 1 (nccl-tests --report_cputime) is not supported"),
    (["-T", "30"], "expected --timeout-s S"),
    (["-J", "r.json"], "expected --out FILE"),
    (["-m", "4"], "-m 4 (nccl-tests --agg_iters)"),
    (["--nthreads", "2"], "-t 2 (nccl-tests --nthreads)"),
])
def test_nccl_tests_flags_without_a_counterpart_say_what_to_use(argv, hint, capsys):
    assert main(["bench", *argv, "--no-out"]) == 2
    assert hint in one_error_line(capsys)


def test_nccl_tests_flags_at_the_value_this_command_uses_are_accepted():
    # A command line copied from nccl-tests' README (-g 1 per process under mpirun) still runs.
    config = config_of("-b", "8", "-e", "128M", "-f", "2", "-g", "1", "-t", "1", "-C", "0", "-z", "0", "-r", "0")
    assert config.max_bytes == 128 * 2**20 and config.step_factor == 2


def test_a_i_and_G_flags_reach_the_config():
    config = config_of("-b", "1K", "-e", "3K", "-i", "1K")  # -i alone: nccl-tests' default -f 1
    assert config.step_factor == 1 and [size for size, _ in config.sizes()] == [1024, 2048, 3072]
    assert config_of("-f", "0", "-b", "1K", "-e", "3K", "-i", "1K").sizes() == config.sizes()
    assert config_of().time_over_ranks == "max"  # -a 3 is the default here (nccl-tests: -a 1)
    assert [config_of("-a", str(a)).time_over_ranks for a in range(4)] == ["rank0", "avg", "min", "max"]
    assert config_of("-G", "10", "--backend", "nccl").graph_launches == 10


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU machine auto picks NCCL")
def test_cuda_graphs_on_gloo_are_refused_in_one_line(capsys):
    assert main(["bench", "--ranks", "2", "-G", "5", "--no-out"]) == 2  # auto -> gloo on this machine
    assert one_error_line(capsys) == ("gpucomm bench: error: -G 5 (CUDA graph launches) needs NCCL on GPUs, but the "
                                      "backend is gloo (CPU): expected -G 0, or GPUs with --backend nccl")


# --- the table --------------------------------------------------------------------------------------

def test_real_run_prints_both_placements_the_nccl_tests_footer_and_per_iteration_columns():
    proc = subprocess.run([*BENCH, "--ranks", "2", "--backend", "gloo", "--collective", "all_gather", "-b", "8",
                           "-e", "512", "-f", "8", "-n", "3", "-w", "1", "-o", "prod", "-I", "1", "--no-out",
                           "--no-progress"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "# -o prod ignored: all_gather does not reduce (redop none, as nccl-tests)" in lines
    assert [line.split() for line in lines if "per-iteration)" in line] == [
        ["#", "out-of-place", "(+", "per-iteration)", "in-place", "(+", "per-iteration)"]]
    rows = [line.split() for line in lines if line and not line.startswith("#")]
    assert [row[:5] for row in rows] == [["8", "1", "float32", "none", "-1"], ["64", "8", "float32", "none", "-1"],
                                         ["512", "64", "float32", "none", "-1"]]
    assert all(len(row) == 5 + 2 * 8 and row[8] == row[16] == "0" for row in rows)  # #wrong of both placements
    assert lines[-2] == "# Out of bounds values : 0 OK"
    assert lines[-1].startswith("# Avg bus bandwidth    : ") and "e" not in lines[-1].split(": ")[1]
