"""Output files never lose data: the one output-path rule of every verb (``gpucomm.measure.output_paths``).

Each test here is a finding of issue 24 on a71e2e1: an input replaced by the output, an existing file
overwritten without a word, folders created by one verb and refused by another, tracebacks on a full
disk, a pipe or a record whose number is a string. Everything runs in-process; where a verb would go on
to measure, a sentinel stops it at the first step of work, so "refused before any work" is what is checked.
"""

from __future__ import annotations

import errno
import json
import os
import threading

import pytest

from gpucomm import GpucommError
from gpucomm.cli import main
from gpucomm.measure.logs.nccl_tests import bundled_log_text
from gpucomm.measure.results import ResultsWriter, read_results
from gpucomm.model.collectives import COLLECTIVES

RECORDS = [{"record": "meta", "tool": "test"}, {"record": "result", "msg_bytes": 8}, {"record": "result", "msg_bytes": 16}]


class WorkStarted(Exception):
    """Raised by the sentinel where a verb passed its checks and would start measuring."""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err: str) -> str:
    """The one line a refused command prints (a traceback would be many)."""
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def write_log(tmp_path, name="run.log", log="C04"):
    path = tmp_path / name
    path.write_text(bundled_log_text(log))
    return path


@pytest.fixture
def no_work(monkeypatch):
    """Stop bench, copybw and doctor at their first step of work (after every input check)."""
    import gpucomm.cli.copybw as copybw_verb
    import gpucomm.cli.doctor as doctor_verb
    import gpucomm.measure.results as results_module

    def started(*args, **kwargs):
        raise WorkStarted

    monkeypatch.setattr(results_module, "TableReporter", started)  # bench: built just before the ranks start
    monkeypatch.setattr(copybw_verb, "require_torch", started)  # copybw and doctor: called after the output check
    monkeypatch.setattr(doctor_verb, "require_torch", started)


# --- never an input -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", ["same", "dotted", "link"])
def test_parse_never_writes_over_its_log(tmp_path, capsys, monkeypatch, spelling):
    """Before: ``gpucomm parse run.log --out run.log`` replaced the log with JSON lines and exited 0."""
    log = write_log(tmp_path)
    before = log.read_bytes()
    monkeypatch.chdir(tmp_path)
    out = {"same": "run.log", "dotted": "./sub/../run.log", "link": "alias.log"}[spelling]
    (tmp_path / "sub").mkdir()
    (tmp_path / "alias.log").symlink_to(log)
    code, stdout, err = run(capsys, "parse", "run.log", "--out", out, "--force")
    assert code == 2 and stdout == ""
    assert error_line(err) == (f"gpucomm parse: error: --out {out!r} is also an input of this command: writing it "
                               "would replace what is read; expected another file name")
    assert log.read_bytes() == before


def test_fit_plot_is_never_the_results_file(tmp_path, capsys):
    results = tmp_path / "sweep.html"  # a results file may have any name
    results.write_text("{}\n")
    code, _, err = run(capsys, "fit", str(results), "--plot", str(results), "--force")
    assert code == 2 and "is also an input of this command" in error_line(err)
    assert results.read_text() == "{}\n"


# --- an existing file only with --force ---------------------------------------------------------------------------

def test_parse_refuses_an_existing_out_unless_force(tmp_path, capsys):
    """Before: the file was replaced without a word (nccl-tests opens its -J file with "wx")."""
    log = write_log(tmp_path)
    target = tmp_path / "published.jsonl"
    target.write_text("my earlier results\n")
    code, out, err = run(capsys, "parse", str(log), "--out", str(target))
    assert code == 2 and out == ""
    assert error_line(err) == (f"gpucomm parse: error: --out {str(target)!r} already exists: expected a new file name, "
                               "or --force to replace it")
    assert target.read_text() == "my earlier results\n"
    code, out, err = run(capsys, "parse", str(log), "--out", str(target), "--force")
    assert code == 0 and err == "" and f"# Results file       : {target}" in out
    assert read_results(target).meta["tool"] == "gpucomm.parse"


def test_parse_with_several_runs_refuses_before_writing_any(tmp_path, capsys):
    """A log of two runs writes FILE.run1.jsonl and FILE.run2.jsonl: one already there stops both."""
    log = tmp_path / "two.log"
    log.write_text(bundled_log_text("C04") + "\n" + bundled_log_text("C04"))
    (tmp_path / "x.run2.jsonl").write_text("kept\n")
    code, _, err = run(capsys, "parse", str(log), "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and "x.run2.jsonl' already exists" in error_line(err)
    assert not (tmp_path / "x.run1.jsonl").exists() and (tmp_path / "x.run2.jsonl").read_text() == "kept\n"
    code, _, err = run(capsys, "parse", str(log), "--out", str(tmp_path / "x.jsonl"), "--force")
    assert code == 0 and len(read_results(tmp_path / "x.run2.jsonl")) > 0


@pytest.mark.parametrize("verb", [["bench", "--ranks", "2", "--backend", "gloo", "-e", "64"], ["copybw"]])
def test_measuring_verbs_refuse_an_existing_out_before_any_work(tmp_path, capsys, no_work, verb):
    pytest.importorskip("torch")  # bench says it needs torch first
    target = tmp_path / "old.jsonl"
    target.write_text("a sweep of yesterday\n")
    code, out, err = run(capsys, *verb, "--out", str(target))
    assert code == 2 and out == ""
    assert error_line(err) == (f"gpucomm {verb[0]}: error: --out {str(target)!r} already exists: expected a new file "
                               "name, or --force to replace it")
    with pytest.raises(WorkStarted):  # with --force the checks pass and the measurement would start
        main([*verb, "--out", str(target), "--force"])
    assert target.read_text() == "a sweep of yesterday\n"  # nothing written before the work


def test_fit_refuses_an_existing_plot_before_fitting(tmp_path, capsys):
    log = write_log(tmp_path)
    results = tmp_path / "r.jsonl"
    assert main(["parse", str(log), "--out", str(results)]) == 0
    plot = tmp_path / "fit.html"
    plot.write_text("<p>my annotated plot</p>")
    capsys.readouterr()
    code, out, err = run(capsys, "fit", str(results), "--plot", str(plot))
    assert code == 2 and out == ""  # refused before the fit printed anything
    assert "--plot" in error_line(err) and "already exists: expected a new file name, or --force" in err
    assert plot.read_text() == "<p>my annotated plot</p>"


def test_out_dash_is_not_a_file_named_dash(tmp_path, capsys, monkeypatch):
    """``--out -`` would have written a file named ``-`` where standard output was meant."""
    log = write_log(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "parse", str(log), "--out", "-")
    assert code == 2 and out == "" and not (tmp_path / "-").exists()
    assert error_line(err) == ("gpucomm parse: error: --out '-' is not a file name: expected a file name such as "
                               "results/published.jsonl, or /dev/stdout for standard output")


# --- folders: one rule, a missing folder is refused by name -------------------------------------------------------

@pytest.mark.parametrize("verb", [["parse", "LOG"], ["bench", "--ranks", "2", "-e", "64"], ["copybw"],
                                  ["fit", "RESULTS", "--plot"]])
def test_every_verb_refuses_a_missing_folder(tmp_path, capsys, no_work, verb):
    """Before: bench created /new/dir, parse refused it, fit drew the plot and then failed."""
    pytest.importorskip("torch")
    log = write_log(tmp_path)
    results = tmp_path / "r.jsonl"
    assert main(["parse", str(log), "--out", str(results)]) == 0
    capsys.readouterr()
    target = tmp_path / "new" / "dir" / ("x.html" if verb[0] == "fit" else "x.jsonl")
    argv = [{"LOG": str(log), "RESULTS": str(results)}.get(a, a) for a in verb]
    code, out, err = run(capsys, *argv, *([] if verb[0] == "fit" else ["--out"]), str(target))
    assert code == 2 and out == ""
    assert error_line(err) == (f"gpucomm {verb[0]}: error: {'--plot' if verb[0] == 'fit' else '--out'} {str(target)!r}: "
                               f"folder {str(target.parent)!r} does not exist: expected a file in an existing folder "
                               "(create it first)")
    assert not (tmp_path / "new").exists()


def test_doctor_refuses_an_empty_out_dir(tmp_path, capsys, monkeypatch, no_work):
    """Before: --out-dir '' wrote report.html and report.json into the current folder."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "doctor", "--out-dir", "")
    assert code == 2 and out == ""
    assert error_line(err) == ("gpucomm doctor: error: --out-dir '' is not a folder name: expected a folder such as "
                               "./gpucomm-doctor")
    assert os.listdir(tmp_path) == []


def test_doctor_keeps_an_earlier_report_unless_force(tmp_path, capsys, no_work):
    (tmp_path / "report.json").write_text("{}")
    (tmp_path / "nccl_debug.node1.42.log").write_text("NCCL INFO")
    code, out, err = run(capsys, "doctor", "--out-dir", str(tmp_path))
    assert code == 2 and out == ""
    assert error_line(err) == (f"gpucomm doctor: error: --out-dir {tmp_path} already holds nccl_debug.node1.42.log, "
                               "report.json of an earlier run: expected a new folder, or --force to replace them")
    with pytest.raises(WorkStarted):
        main(["doctor", "--out-dir", str(tmp_path), "--force"])
    with pytest.raises(WorkStarted):  # a folder of other files is fine
        main(["doctor", "--out-dir", str(tmp_path / "new")])


# --- a full disk, a pipe, a FIFO ----------------------------------------------------------------------------------

def test_parse_to_a_full_disk_is_one_line(tmp_path, capsys):
    """Before: a traceback ending in OSError: [Errno 28] No space left on device."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    code, out, err = run(capsys, "parse", str(write_log(tmp_path)), "--out", "/dev/full")
    assert code == 2
    assert error_line(err) == "gpucomm parse: error: results file '/dev/full' cannot be written: No space left on device"


def test_a_full_disk_keeps_the_records_already_written(tmp_path, monkeypatch):
    """Each record is synced as it finishes: the one that hits the full disk is lost, the ones before are not."""
    import gpucomm.measure.results as results_module

    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results_module.os, "fsync", fsync)
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path) as writer:
        writer.write(RECORDS[0])
        writer.write(RECORDS[1])
        with pytest.raises(GpucommError, match=r"^results file '.*r\.jsonl' cannot be written: No space left on device; "
                                               r"the 2 records written before are in it$"):
            writer.write(RECORDS[2])
    saved = read_results(path)
    assert saved.meta == RECORDS[0] and saved[0] == RECORDS[1]


def test_results_to_a_pipe_need_no_fsync():
    """Before: os.fsync on a pipe raised OSError: [Errno 22] Invalid argument (``--out /dev/stdout | ...``)."""
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, encoding="utf-8") as reader:
        with ResultsWriter(f"/proc/self/fd/{write_fd}") as writer:
            for record in RECORDS:
                writer.write(record)
        os.close(write_fd)
        assert [json.loads(line) for line in reader] == RECORDS


def test_parse_to_a_fifo_just_works(tmp_path, capsys):
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.extend(fifo.read_text().splitlines()), daemon=True)
    reader.start()
    code, out, err = run(capsys, "parse", str(write_log(tmp_path)), "--out", str(fifo))  # a FIFO holds no data to lose
    reader.join(timeout=30)
    assert code == 0 and err == ""
    assert json.loads(received[0])["record"] == "meta" and len(received) > 1


def test_a_pipe_whose_reader_left_is_one_line(tmp_path):
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    writer = ResultsWriter(f"/proc/self/fd/{write_fd}")
    with pytest.raises(GpucommError, match=r"cannot be written: Broken pipe$"):
        writer.write(RECORDS[0])
    writer.close()  # quiet: the failure was already raised
    os.close(write_fd)


def test_results_writer_refuses_an_existing_file_without_replace(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("kept\n")
    with pytest.raises(GpucommError, match=r"already exists: expected a new file name, or --force"):
        ResultsWriter(path, replace=False)
    assert path.read_text() == "kept\n"


# --- fit reads the numbers it fits --------------------------------------------------------------------------------

@pytest.mark.parametrize("key, value, expected", [
    ("msg_bytes", "8", "msg_bytes '8' is not valid: expected a number > 0"),
    ("time_s", -1e-5, "time_s -1e-05 is not valid: expected a number > 0"),
    ("busbw_bytes_per_s", None, "busbw_bytes_per_s None is not valid: expected a number >= 0"),
    ("num_ranks", [8], "num_ranks [8] is not valid: expected an integer >= 1, or null"),
    ("num_wrong", "0", "num_wrong '0' is not valid: expected an integer >= 0, or null"),
    ("collective", 7, f"collective 7 is not known: expected one of {', '.join(COLLECTIVES)}, or null"),
])
def test_fit_names_the_line_of_a_record_it_cannot_read(tmp_path, capsys, key, value, expected):
    """Before: ``"msg_bytes": "8"`` ended in a TypeError traceback inside the fit."""
    results = tmp_path / "r.jsonl"
    assert main(["parse", str(write_log(tmp_path)), "--out", str(results)]) == 0
    lines = results.read_text().splitlines()
    record = json.loads(lines[2])
    record[key] = value
    lines[2] = json.dumps(record)
    results.write_text("\n\n".join(lines) + "\n")  # blank lines between: the line number is the file's
    capsys.readouterr()
    code, out, err = run(capsys, "fit", str(results))
    assert code == 2 and out == ""
    assert error_line(err) == f"gpucomm fit: error: results file {str(results)!r} line 5: {expected}"

