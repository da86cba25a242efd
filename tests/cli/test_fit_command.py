"""``gpucomm fit`` on what ``gpucomm parse`` makes of real logs: wrong elements, partial logs, placements, and a
comparison between different systems that says so.

The results files are written by ``gpucomm parse`` from the bundled nccl-tests logs (a row edited where a case
needs one: said in each test), or, for the gloo sweep, in the layout ``gpucomm bench --out`` writes.
"""

from __future__ import annotations

import json

import pytest

from gpucomm.cli import main
from gpucomm.measure.logs.nccl_tests import bundled_log_text
from gpucomm.measure.results import sweep_record
from gpucomm.model.collectives import busbw_factor


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def parsed(tmp_path, capsys, name: str, text: str, *flags: str) -> str:
    """``gpucomm parse`` of ``text`` into a results file; its path."""
    log = tmp_path / f"{name}.txt"
    log.write_text(text)
    out = tmp_path / f"{name}.jsonl"
    code, _, err = run(capsys, "parse", str(log), "--out", str(out), *flags)
    assert code in (0, 1), err
    return str(out)


def table(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line and not line.startswith("#")]


def test_sizes_with_wrong_elements_are_left_out_with_one_line(tmp_path, capsys):
    """C04 with 17 wrong elements at 2 GiB (in-place): before, fit used that time silently."""
    text = bundled_log_text("C04").replace("153.42  230.13      0", "153.42  230.13     17")
    path = parsed(tmp_path, capsys, "wrong", text)
    code, out, err = run(capsys, "fit", path)
    assert code == 0 and err == ""
    warnings = [line for line in out.splitlines() if line.startswith("# warning")]
    assert warnings == ["# warning [wrong]: 1 size(s) with wrong elements left out of the fit (2 GiB: 17 wrong in all): "
                        "their times are not of a correct collective"]
    assert [row[0] for row in table(out)] == ["1073741824", "4294967296", "8589934592"]
    assert "3 sizes from" in out.splitlines()[0]
    every = bundled_log_text("C04").replace("      0\n", "      5\n")
    code, out, err = run(capsys, "fit", parsed(tmp_path, capsys, "all_wrong", every))
    assert code == 2 and out == "" and err.count("\n") == 1 and "every record of results file" in err


def test_partial_log_takes_the_shape_from_the_flags(tmp_path, capsys, shapeless_log):
    """A log that says neither collective nor ranks: before, 'number of GPUs None is not valid' even with --gpus."""
    path = parsed(tmp_path, capsys, "shapeless", shapeless_log)
    code, out, err = run(capsys, "fit", path, "--link", "nvlink3", "--gpus", "2")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "does not say which collective the sweep ran" in err
    assert "expected --collective NAME (one of all_reduce, broadcast, reduce, send_recv)" in err
    code, out, err = run(capsys, "fit", path, "--link", "nvlink3", "--gpus", "2", "--collective", "all_reduce")
    assert code == 0, err
    assert "# the results do not say how many ranks: --gpus 2 is taken as the sweep's rank count too" in out
    assert out.startswith("# all_reduce on 2 ranks")
    code, out, err = run(capsys, "fit", path, "--collective", "all_reduce")
    assert code == 2 and "does not say how many ranks the sweep ran" in err and "expected --ranks N" in err
    code, out, _ = run(capsys, "fit", path, "--collective", "all_reduce", "--ranks", "2")
    assert code == 0 and out.startswith("# all_reduce on 2 ranks")


def test_flags_that_contradict_the_records_are_refused(tmp_path, capsys):
    path = parsed(tmp_path, capsys, "c04", bundled_log_text("C04"))
    code, out, err = run(capsys, "fit", path, "--ranks", "8")
    assert code == 2 and out == ""
    assert err.strip() == (f"gpucomm fit: error: --ranks 8 contradicts results file {path!r}: its records say 4; "
                           "expected --ranks only for results that do not say it")


def test_one_placement_is_fitted(tmp_path, capsys):
    """gpucomm parse keeps both placements in each record; fit reads the top level (in-place by default)."""
    path = parsed(tmp_path, capsys, "c04", bundled_log_text("C04"))
    code, out, _ = run(capsys, "fit", path)
    assert code == 0 and "records:" not in out and "4 sizes from" in out.splitlines()[0]
    assert [row[2] for row in table(out)] == ["224.890", "230.130", "164.130", "234.740"]
    code, out, _ = run(capsys, "fit", parsed(tmp_path, capsys, "oop", bundled_log_text("C04"), "--out-of-place"))
    assert [row[2] for row in table(out)] == ["224.840", "230.270", "232.810", "234.720"]


def test_a_size_the_log_measured_the_other_way_only_is_left_out(tmp_path, capsys):
    """C04 with the in-place half of 2 GiB printed N/A: that size's top level is out-of-place, not fitted in-place."""
    text = bundled_log_text("C04").replace("13997  153.42  230.13      0", "  N/A    0.00    0.00    N/A")
    code, out, _ = run(capsys, "fit", parsed(tmp_path, capsys, "na", text))
    assert code == 0 and "# in-place records: 3 of 4 (one placement per fit" in out
    assert [row[0] for row in table(out)] == ["1073741824", "4294967296", "8589934592"]


def c04_records(tmp_path, name: str, meta: dict, records: list[dict]) -> str:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [meta, *records]))
    return str(path)


def test_results_files_written_before_one_record_per_size_still_fit(tmp_path, capsys):
    """gpucomm parse's two records per size (``in_place`` true/false, meta placement ``in-place``), and a bench file
    of top-level fields only (no ``placement``): the same fit as today's files give."""
    from gpucomm.measure.logs.nccl_tests import read_bundled_log

    log = read_bundled_log("C04")
    shape = {"record": "result", "collective": "all_reduce", "num_ranks": 4}
    rows = [dict(shape, msg_bytes=r.size_bytes, time_s=r.time_s, algbw_bytes_per_s=r.algbw_bytes_per_s,
                 busbw_bytes_per_s=r.busbw_bytes_per_s, num_wrong=r.wrong, in_place=r.in_place) for r in log.records]
    meta = {"record": "meta", "tool": "gpucomm.parse", "placement": "in-place", "num_ranks": 4}
    code, out, err = run(capsys, "fit", c04_records(tmp_path, "two", meta, rows))
    assert code == 0, err
    assert "# in-place records: 4 of 8" in out
    assert [row[2] for row in table(out)] == ["224.890", "230.130", "164.130", "234.740"]
    code, out, _ = run(capsys, "fit", c04_records(tmp_path, "two_oop", dict(meta, placement="out-of-place"), rows))
    assert [row[2] for row in table(out)] == ["224.840", "230.270", "232.810", "234.720"]
    old_bench = [{k: v for k, v in r.items() if k != "in_place"} for r in rows if r["in_place"]]
    code, out, _ = run(capsys, "fit", c04_records(tmp_path, "old", {"record": "meta", "tool": "gpucomm.bench"},
                                                  old_bench))
    assert code == 0 and "records:" not in out
    assert [row[2] for row in table(out)] == ["224.890", "230.130", "164.130", "234.740"]


def gloo_sweep(tmp_path) -> str:
    """A 2-rank gloo sweep on CPU in gpucomm bench's results layout (about 1 GB/s: CPU processes, host memory)."""
    meta = {"record": "meta", "tool": "gpucomm.bench", "backend": "gloo", "num_ranks": 2, "devices": ["cpu", "cpu"]}
    rows = []
    for k in range(10, 27, 2):
        size = 2**k
        time_s = 50e-6 + size / 1.2e9
        in_place = {"time_s": time_s, "algbw_bytes_per_s": size / time_s,
                    "busbw_bytes_per_s": busbw_factor("all_reduce", 2) * size / time_s, "num_wrong": 0, "iters": 20}
        rows.append(sweep_record(collective="all_reduce", msg_bytes=size, count=size // 4, dtype="float32", op="sum",
                                 num_ranks=2, blocks=1, warmup_iters=5, root=-1,
                                 measured={"out_of_place": None, "in_place": in_place}))
    path = tmp_path / "gloo.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [meta, *rows]))
    return str(path)


def test_a_gloo_sweep_against_an_nvlink_model_says_what_the_ratio_means(tmp_path, capsys):
    """Before: 'ratio 0.00' and nothing else."""
    code, out, _ = run(capsys, "fit", gloo_sweep(tmp_path), "--link", "nvlink4", "--gpus", "8")
    assert code == 0
    caveats = [line for line in out.splitlines() if line.startswith("# caveat")]
    assert caveats[0].startswith("# caveat: measured with backend gloo (CPU processes exchanging data through host "
                                 "memory and sockets), compared with NCCL over nvlink4: two different systems")
    assert "the ratio says how far this setup is from that GPU system, not how well the model predicts this one" \
        in caveats[0]
    assert caveats[1].startswith("# caveat: the sweep ran on 2 ranks, the model on 8 GPUs")
    last = out.splitlines()[-1]
    ratio = float(last.rsplit("ratio ", 1)[1])
    assert 0.001 < ratio < 0.01 and last.endswith(f"ratio {ratio:.3g}")  # three significant digits, not 0.00
    assert all(float(row[5]) > 0 for row in table(out))


@pytest.mark.parametrize("argv, match", [
    (["--ranks", "1"], "--ranks 1 is out of range: expected an integer >= 2"),
    (["--collective", "allreduce"], "invalid choice"),
])
def test_bad_flags_are_one_line(tmp_path, capsys, argv, match):
    code, out, err = run(capsys, "fit", gloo_sweep(tmp_path), *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and match in err
