"""``gpucomm diagnose``: an NCCL_DEBUG=INFO log -> what NCCL set up and the known problems; one-line errors; no torch."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from gpucomm.cli import main
from gpucomm.measure.logs.nccl_info import bundled_info_log_names, bundled_info_log_text, read_bundled_info_log

NAMES = bundled_info_log_names()
WIDE = "200"  # columns: the tables keep every finding's title on one line


def write(tmp_path, name: str, content) -> str:
    path = tmp_path / name
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return str(path)


def run(capsys, *argv):
    code = main(["diagnose", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", NAMES)
def test_every_bundled_log_prints_its_setup_and_findings(tmp_path, capsys, monkeypatch, name):
    monkeypatch.setenv("COLUMNS", WIDE)
    code, out, err = run(capsys, write(tmp_path, f"{name}.txt", bundled_info_log_text(name)))
    assert code == 0 and err == ""
    log = read_bundled_info_log(name)
    assert f"{log.nccl_lines} NCCL lines of {log.total_lines}" in out
    for label in log.transports:
        assert label in out
    if log.findings:
        assert f"findings ({len(log.findings)})" in out
        for i, f in enumerate(log.findings, 1):
            assert f"[{f.code}]" in out and f"[{i}] {f.title}" in out and f"source: {f.source}" in out
    else:
        assert "no known problem found" in out


@pytest.mark.parametrize("name", NAMES)
def test_json_is_one_object_with_the_facts_and_findings(tmp_path, capsys, name):
    path = write(tmp_path, f"{name}.txt", bundled_info_log_text(name))
    code, out, err = run(capsys, path, "--json")
    assert code == 0 and err == "" and out.count("\n") == 1
    data = json.loads(out)
    log = read_bundled_info_log(name)
    assert data["input"] == path
    assert data["transports"] == log.transports and data["num_ranks"] == log.num_ranks
    assert [f["code"] for f in data["findings"]] == [f.code for f in log.findings]
    assert [tuple(f["lines"]) for f in data["findings"]] == [f.lines for f in log.findings]


def test_the_readme_example(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", WIDE)
    code, out, _ = run(capsys, write(tmp_path, "ray.txt", bundled_info_log_text("ray_lightning_24")))
    assert code == 0
    assert "ring order, channel 0" in out and "0 1" in out and "P2P/IPC" in out
    assert "GPUs of one node cannot map each other's memory (P2P/IPC failed) [warn_cuda_ipc]" in out
    assert "NCCL_P2P_DISABLE=1" in out


def test_tuning_choices_are_a_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", WIDE)
    code, out, _ = run(capsys, write(tmp_path, "t.txt", bundled_info_log_text("nccl_1595")))
    assert code == 0 and "algorithm and protocol chosen" in out
    assert "768 MiB" in out and "Ring" in out and "Simple" in out


def test_standard_input(capsys, monkeypatch):
    text = bundled_info_log_text("nccl_1412")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, err = run(capsys, "-", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["input"] == "standard input" and [f["code"] for f in data["findings"]] == ["no_gdrdma"]


@pytest.mark.parametrize("content, message", [
    (None, "cannot read log '{path}': No such file or directory"),
    ("dir", "cannot read log '{path}': Is a directory"),
    (b"\x7fELF\x00\x01", "log '{path}' is binary (it contains NUL bytes): expected an NCCL_DEBUG=INFO log"),
    ("", "log '{path}' is empty: expected an NCCL_DEBUG=INFO log"),
    ("  \n\n", "log '{path}' is empty: expected an NCCL_DEBUG=INFO log"),
    ("# nThread 1 nGpus 8 minBytes 8 maxBytes 128\n   1024   256  float  sum  -1  10.0  0.10  0.18  0\n",
     "log '{path}': no NCCL debug line in the text: expected lines like 'host:pid:tid [0] NCCL INFO ...'"),
])
def test_bad_input_is_one_line_naming_it_with_status_2(tmp_path, capsys, content, message):
    path = tmp_path / "log.txt"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("gpucomm diagnose: error: "), err
    assert message.format(path=path) in err


def test_diagnose_loads_no_heavy_library(tmp_path):
    path = write(tmp_path, "log.txt", bundled_info_log_text("nccl_tests_188"))
    code = ("import sys, contextlib, io\nfrom gpucomm.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    status = main(['diagnose', {path!r}])\n"
            "print(status, sorted(m for m in ('torch', 'plotly', 'pandas', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "0 []", out.stderr


def test_totals_communicators_and_pytorch_lines_are_shown(tmp_path, capsys, monkeypatch):
    """Issue 24: NCCL's totals (not the lines seen), per-node communicators, PyTorch's watchdog timeout."""
    monkeypatch.setenv("COLUMNS", WIDE)
    ring = " ".join(f"{r:3d}" for r in range(20))
    text = (f"a:1:2 [0] NCCL INFO Channel 00/16 : {ring}\n"
            "c:1:2 [7] NCCL INFO Channel 00/0 : 23[7] -> 0[0] [send] via NET/IB/0/GDRDMA\n"
            "[rank3]:[E321 02:07:08.408 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600040 milliseconds "
            "before timing out.\n")
    code, out, err = run(capsys, write(tmp_path, "train.log", text))
    assert code == 0 and err == ""
    assert "at least 24" in out and "16 collective" in out and "1 watchdog timeout(s)" in out
    assert "[torch_watchdog_timeout]" in out and "no known problem" not in out


def test_per_node_communicators_are_named(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", WIDE)
    text = "".join(f"{host}:1:2 [{r}] NCCL INFO comm 0x5 rank {r} nranks 8 cudaDev {r} busId 1000 commId {cid} - Init COMPLETE\n"
                   for host, cid in (("node1", "0xa"), ("node2", "0xb")) for r in range(8))
    code, out, _ = run(capsys, write(tmp_path, "two.log", text))
    assert code == 0 and "[per_node_communicators]" in out
    assert "8 ranks (commId 0xa), 8 ranks (commId 0xb)" in out
