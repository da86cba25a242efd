"""``gpucomm doctor``: the output folder checked before any work, the summary, --json, report.json and the offline
HTML report, exit statuses (0 / 1 / 2 / 130 with the finished checks kept), progress; one real CPU run.

(Named test_doctor_verb.py: tests/measure/test_doctor.py holds the checks, and pytest's default import mode
refuses two test modules of one basename.)
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpucomm.cli import doctor as verb
from gpucomm.cli import main
from gpucomm.measure import doctor as d


def run(capsys, *argv):
    code = main(["doctor", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def host_copies(**kw):
    return [{"record": "copy", "kind": k, "bytes": s, "time_s": s / 8e9, "bw_bytes_per_s": 8e9}
            for k in ("host_torch", "host_numpy") for s in (kw["min_bytes"], kw["max_bytes"])]


def gloo_sweep(num_wrong: int = 0):
    def sweep(self, **kw):
        return [{"record": "result", "collective": "all_reduce", "msg_bytes": s, "num_ranks": kw["num_ranks"],
                 "time_s": 1e-4 + s / 1e9, "algbw_bytes_per_s": s / (1e-4 + s / 1e9),
                 "busbw_bytes_per_s": s / (1e-4 + s / 1e9), "num_wrong": num_wrong} for s in (8, 1024, kw["max_bytes"])]
    return sweep


@pytest.fixture
def canned(monkeypatch):
    """This machine, with canned copies and sweep (no processes started): the verb's own behaviour, fast."""
    monkeypatch.setattr(d.SystemProbe, "copy_bandwidth", lambda self, **kw: host_copies(**kw))
    monkeypatch.setattr(d.SystemProbe, "sweep", gloo_sweep())
    monkeypatch.setattr(d.SystemProbe, "torch_info", lambda self: {"torch_version": "2.4.0+cpu", "torch_cuda": None,
                                                                   "nccl_version": None, "cuda_gpus": []})
    return monkeypatch


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if not line.startswith("gpucomm doctor: [")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("make_path, words", [
    (lambda tmp: tmp / "missing" / "report", "its parent folder"),
    (lambda tmp: (tmp / "a_file").write_text("x") and tmp / "a_file", "is a file: expected a folder"),
    (lambda tmp: "/sys/gpucomm-doctor-test", "is not writable"),
])
def test_a_bad_output_folder_is_refused_before_any_work(tmp_path, capsys, monkeypatch, make_path, words):
    monkeypatch.setattr(verb, "run_doctor", lambda *a, **k: pytest.fail("the doctor started"))
    path = make_path(tmp_path)
    code, out, err = run(capsys, "--out-dir", str(path))
    assert code == 2 and out == ""
    assert one_error_line(err).startswith(f"gpucomm doctor: error: --out-dir {path}") and words in err
    assert not (tmp_path / "missing").exists()


def test_summary_report_files_and_progress(tmp_path, capsys, canned):
    canned.setenv("COLUMNS", "200")
    code, out, err = run(capsys, "--out-dir", str(tmp_path / "rep"), "--quick")
    assert code == 0
    assert "gpucomm doctor on" in out and "(no CUDA GPU: CPU parts only): ok" in out
    assert "no model for gloo on CPU: correctness only" in out and "not run here" in out
    assert "nccl_log: gloo (CPU) writes no NCCL log" in out
    assert f"report: {tmp_path / 'rep' / 'report.html'}" in out
    assert err.splitlines()[0] == "gpucomm doctor: [1/8] inventory: torch, NVML, versions"
    assert len(err.splitlines()) == 8
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert data["mode"] == "cpu" and data["status"] == "ok" and not data["interrupted"]
    assert {c["name"] for c in data["checks"]} >= {"inventory", "iommu", "copy:host_torch", "all_reduce", "nccl_log"}


def test_json_prints_the_report_as_one_line(tmp_path, capsys, canned):
    code, out, _ = run(capsys, "--out-dir", str(tmp_path), "--json", "--no-sweep")
    assert code == 0 and out.count("\n") == 1
    data = json.loads(out)
    assert data == json.loads((tmp_path / "report.json").read_text())
    assert {c["name"]: c["measured"] for c in data["checks"]}["all_reduce"] == "--no-sweep: not run"


def test_the_html_report_is_self_contained(tmp_path, capsys, canned):
    from plotly.offline import get_plotlyjs

    assert run(capsys, "--out-dir", str(tmp_path))[0] == 0
    page = (tmp_path / "report.html").read_text()
    assert page.count(get_plotlyjs()) == 1  # plotly.js inlined once
    rest = page.replace(get_plotlyjs(), "")  # (plotly.js itself names its CDN, for other ways of loading it)
    assert "<script src=" not in rest and "cdn.plot.ly" not in rest and "mathjax" not in rest.lower()
    assert page.count('class="plotly-graph-div"') == 2  # copy bandwidth and the sweep
    assert "Not run here" in page and "no model for gloo on CPU" in page


def test_exit_status_1_when_a_check_finds_a_pathology(tmp_path, capsys, canned):
    canned.setattr(d.SystemProbe, "sweep", gloo_sweep(num_wrong=3))
    code, out, _ = run(capsys, "--out-dir", str(tmp_path))
    assert code == 1 and "pathology" in out and "what to fix" in out and "Xid" in out
    check = {c["name"]: c for c in json.loads((tmp_path / "report.json").read_text())["checks"]}["all_reduce"]
    assert check["status"] == "pathology" and check["measured"].endswith("; 9 wrong element(s)")  # 3 in each of 3 sizes


def test_ctrl_c_keeps_the_finished_checks(tmp_path, capsys, canned):
    def interrupt(self, **kw):
        raise KeyboardInterrupt

    canned.setattr(d.SystemProbe, "sweep", interrupt)
    code, out, err = run(capsys, "--out-dir", str(tmp_path))
    assert code == 130 and out == ""
    assert one_error_line(err) == (f"gpucomm doctor: error: interrupted after 6 of 8 steps; the finished checks are in "
                                   f"{tmp_path / 'report.html'}")
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["interrupted"] and "copy:host_numpy" in {c["name"] for c in data["checks"]}
    assert "Interrupted after 6 of 8 steps" in (tmp_path / "report.html").read_text()


def test_help_and_a_light_import(capsys):
    assert main(["doctor", "--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--out-dir", "--quick", "--no-sweep", "--json", "exit status"):
        assert flag in out
    code = "import sys, gpucomm.cli.doctor\nprint(sorted(m for m in ('torch', 'plotly', 'pynvml') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_a_real_cpu_run_with_the_gloo_sweep(tmp_path, capsys):
    pytest.importorskip("torch")
    code, out, err = run(capsys, "--out-dir", str(tmp_path), "--quick")
    data = json.loads((tmp_path / "report.json").read_text())
    checks = {c["name"]: c for c in data["checks"]}
    assert code in (0, 1), err  # 1 only where this host has a real problem (the summary says which)
    assert not [n for n in checks if n.startswith("step:")], checks
    if data["mode"] == "cpu":
        assert checks["all_reduce"]["status"] == "ok" and checks["all_reduce"]["data"]["backend"] == "gloo"
        assert (tmp_path / "sweep.jsonl").exists() and (tmp_path / "copy.jsonl").exists()
    assert (tmp_path / "report.html").stat().st_size > 1_000_000  # plotly.js is in it
