"""The benchmark runner: gloo sweeps with 2 ranks, the results file, interruption, bad input, NCCL on GPUs.

Real process groups, small sizes: the whole file runs in about half a minute on 2 CPU cores.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpucomm import GpucommError  # noqa: E402
from gpucomm.measure import SweepConfig, read_results, run_sweep  # noqa: E402
from gpucomm.measure.config import sweep_sizes  # noqa: E402
from gpucomm.measure.results import SweepResults, format_row, format_table  # noqa: E402
from gpucomm.model.collectives import busbw_factor  # noqa: E402

KiB, MiB = 2**10, 2**20
NUM_GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
needs_nccl = pytest.mark.skipif(NUM_GPUS < 1 or not torch.distributed.is_nccl_available(),
                                reason="NCCL tests need CUDA GPUs")
BENCH = [sys.executable, "-m", "gpucomm", "bench"]


def run_cli(*args, timeout=120, **kwargs):
    return subprocess.run([*BENCH, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def children_of(pid: int) -> set[int]:
    """Direct children of ``pid`` (Linux /proc); empty where /proc is not available."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# --- sizes and validation (no processes) -------------------------------------------------

def test_sizes_follow_nccl_tests_semantics():
    assert sweep_sizes(8, 64 * MiB, 2, 4)[0] == (8, 2)
    assert sweep_sizes(8, 64 * MiB, 2, 4)[-1] == (64 * MiB, 16 * MiB)
    assert len(sweep_sizes(8, 64 * MiB, 2, 4)) == 24
    assert sweep_sizes(8, 1 * MiB, 4, 4)[-1] == (512 * KiB, 128 * KiB)  # -e is an upper bound
    assert sweep_sizes(1, 4, 2, 4) == [(4, 1)]  # 1, 2 and 4 B: at least one element, once
    assert sweep_sizes(10, 40, 2, 4) == [(8, 2), (20, 5), (40, 10)]  # rounded down to whole elements
    assert sweep_sizes(6, 6, 2, 2) == [(6, 3)]
    assert SweepConfig(min_bytes="1KiB", max_bytes="128M").max_bytes == 128 * MiB


def test_size_increment_i_is_used_with_f_0_or_1_as_nccl_tests():
    # nccl-tests TimeTest: size = stepfactor > 1 ? size * stepfactor : size + stepbytes (stepBytes 1 MiB by default).
    assert sweep_sizes(1 * KiB, 4 * KiB, 1, 4, step_bytes=KiB) == [(1024, 256), (2048, 512), (3072, 768), (4096, 1024)]
    assert sweep_sizes(10, 30, 0, 4, step_bytes=10) == [(8, 2), (20, 5), (28, 7)]  # rounded down to whole elements
    for factor in (0, 1):
        config = SweepConfig(min_bytes=8, max_bytes=3 * MiB, step_factor=factor)
        assert config.step_bytes == MiB
        assert [size for size, _ in config.sizes()] == [8, MiB + 8, 2 * MiB + 8]
    assert SweepConfig(step_factor=1, step_bytes="1KiB", max_bytes="8KiB").step_bytes == KiB
    assert SweepConfig().step_bytes is None  # -f 2 multiplies, as before


@pytest.mark.parametrize("kwargs, match", [
    (dict(min_bytes="1MiB", max_bytes=8), "larger than maximum size"),
    (dict(step_factor=-1), "step factor -f -1 is not valid: expected an integer >= 0"),
    (dict(step_factor=1.5), "step factor"),
    (dict(step_bytes="1KiB"), "size increment -i 1024 B is used only with -f 0 or 1 .* but -f is 2"),
    (dict(step_factor=1, step_bytes=8, max_bytes="1GiB"), r"in steps of -i 8 B is \d+ sizes: expected at most 10000"),
    (dict(time_over_ranks="mean"), "time over ranks 'mean' is not valid: expected one of rank0, avg, min, max"),
    (dict(graph_launches=-1), "CUDA graph launches -G -1"),
    (dict(graph_launches=5, backend="gloo"), "-G 5 .CUDA graph launches. needs NCCL on GPUs, but the backend is gloo"),
    (dict(iters=0), "iterations -n 0 is not valid: expected an integer >= 1"),
    (dict(warmup_iters=-1), "warm-up iterations -w -1"),
    (dict(blocks=0), "timed blocks"),
    (dict(max_bytes="lots"), "size 'lots' is not valid"),
    (dict(min_bytes=0), "must be positive"),
    (dict(dtype="int8"), "dtype 'int8' is not valid"),
    (dict(op="avg"), "reduction op -o 'avg'"),
    (dict(backend="mpi"), "backend 'mpi'"),
    (dict(collective="reduce"), "not measured yet"),
    (dict(dtype="bfloat16", backend="gloo"), "bfloat16 is not supported on gloo"),
    (dict(check=2), "check -c 2"),
    (dict(timeout_s=0), "timeout 0"),
    (dict(max_seconds_per_size=-1.0), "max seconds per size"),
])
def test_bad_config_raises_one_clear_line(kwargs, match):
    with pytest.raises(GpucommError, match=match) as info:
        SweepConfig(**kwargs)
    assert "\n" not in str(info.value)


def test_bad_launch_input_raises_before_starting_processes():
    with pytest.raises(GpucommError, match="number of GPUs/ranks 0 is not valid"):
        run_sweep(num_ranks=0)
    if NUM_GPUS == 0:
        with pytest.raises(GpucommError, match="backend nccl needs CUDA GPUs"):
            run_sweep(num_ranks=2, backend="nccl")
        with pytest.raises(GpucommError, match="float16 is not supported on gloo"):
            run_sweep(num_ranks=2, dtype="float16")  # auto falls back to gloo here


def test_backend_choice_never_puts_two_nccl_ranks_on_one_gpu(monkeypatch):
    from gpucomm.measure import harness  # the sweep, the TP layer and the launcher choose the backend here

    monkeypatch.setattr(harness, "cuda_device_count", lambda: 2)
    assert harness.resolve_backend("auto", 2, "float32") == ("nccl", "backend auto: NCCL, one rank per GPU (2 of 2 GPUs)")
    backend, note = harness.resolve_backend("auto", 4, "float32")
    assert backend == "gloo" and "4 ranks but only 2 GPUs" in note
    with pytest.raises(GpucommError, match="one rank per GPU, but 4 ranks .* 2 visible GPUs"):
        harness.resolve_backend("nccl", 4, "float32")
    assert harness.resolve_backend("nccl", 2, "bfloat16")[0] == "nccl"
    with pytest.raises(GpucommError, match="bfloat16 is not supported on gloo"):
        harness.resolve_backend("auto", 4, "bfloat16")
    monkeypatch.setattr(harness, "cuda_device_count", lambda: 0)
    assert harness.resolve_backend("auto", 2, "float32")[0] == "gloo"


def test_cli_bad_input_exits_2_with_one_line(capsys):
    from gpucomm.cli import main

    proc = run_cli("-b", "1MiB", "-e", "8", "--no-out", timeout=60)  # the real command and exit status
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("gpucomm bench: error: minimum size -b 1048576 B (1 MiB) is larger than maximum "
                                   "size -e 8 B (8 B): expected -b <= -e")
    for args, match in [(["-f", "-1"], "step factor -f -1"),
                        (["-i", "1K", "-f", "2"], "size increment -i 1024 B is used only with -f 0 or 1"),
                        (["-a", "4"], "time over ranks -a 4 is not valid: expected 0 (rank 0), 1 (mean)"),
                        (["-I", "2"], "per-iteration timing -I 2"),
                        (["-G", "2", "--backend", "gloo"], "-G 2 (CUDA graph launches) needs NCCL on GPUs"),
                        (["--ranks", "0"], "number of ranks --ranks 0"),
                        (["-f", "1.5"], "step factor -f '1.5' is not an integer"),
                        (["-n", "0"], "iterations -n 0"),
                        (["-d", "bfloat16", "--backend", "gloo"], "bfloat16 is not supported on gloo")]:
        assert main(["bench", *args, "--no-out"]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        # argparse errors and validation errors carry the same prefix
        assert len(lines) == 1 and lines[0].split(": error: ")[0] == "gpucomm bench", lines
        assert match in lines[0], lines


def test_gpucomm_cli_registers_bench_without_importing_torch(fresh_process):
    ran = fresh_process["parser"]  # gpucomm's parser built and used in a fresh interpreter (tests/conftest.py)
    bench = json.loads(ran.stdout)[0]
    assert (bench["min_bytes"], bench["max_bytes"], bench["step_factor"], bench["ranks"]) == ("8", "1M", 4, 2)
    assert bench["func"] == "gpucomm.cli.bench" and ran.heavy(("torch",)) == []


# --- real sweeps with gloo ----------------------------------------------------------------

def check_records(results, *, sizes, num_ranks, dtype="float32", op="sum"):
    assert [(r["msg_bytes"], r["count"]) for r in results] == sizes
    factor = busbw_factor("all_reduce", num_ranks)
    for r in results:
        assert r["num_wrong"] == 0
        assert r["dtype"] == dtype and r["op"] == op and r["num_ranks"] == num_ranks
        assert r["time_s"] > 0
        assert r["algbw_bytes_per_s"] == pytest.approx(r["msg_bytes"] / r["time_s"])
        assert r["busbw_bytes_per_s"] == pytest.approx(r["algbw_bytes_per_s"] * factor)


def test_gloo_sweep_two_ranks_records_and_file(gloo_sweeps):
    # all_reduce of the session's one 2-rank gloo run of every collective (tests/measure/conftest.py)
    results, out = gloo_sweeps.results["all_reduce"], gloo_sweeps.out_dir / "all_reduce.jsonl"
    sizes = sweep_sizes(4, 256 * KiB, 8, 4)
    check_records(results, sizes=sizes, num_ranks=2, op="prod")
    assert results.num_wrong == 0 and results.ok
    meta = results.meta
    assert meta["record"] == "meta" and meta["num_ranks"] == 2 and meta["backend"] == "gloo"
    for key in ("host", "devices", "torch_version", "cuda_version", "nccl_version", "env", "date", "argv"):
        assert key in meta
    assert len(meta["devices"]) == 2 and meta["date"][:4].isdigit() and "T" in meta["date"]
    assert meta["argv"][0] == "run_sweeps"

    lines = out.read_text().splitlines()
    assert len(lines) == 1 + len(sizes)  # metadata, then one record per size
    assert json.loads(lines[0])["record"] == "meta"
    saved = read_results(out)
    assert list(saved) == list(results) and saved.meta == meta

    printed = gloo_sweeps.printed.split("# gpucomm.measure all_reduce:")[1].split("# gpucomm.measure ")[0]
    assert "busbw" in printed and "#wrong" in printed and "(GB/s)" in printed
    rows = [line for line in printed.splitlines()[1:] if line and not line.startswith("#")]
    assert [int(row.split()[0]) for row in rows] == [size for size, _ in sizes]
    assert "# Out of bounds values : 0 OK" in printed and f"# Results file       : {out}" in printed
    assert "# out-of-place: not measured, torch.distributed.all_reduce works in place only" in printed
    # all_reduce exists in place only in torch: that is the measurement, and the per-iteration spread is kept.
    for r in results:
        assert r["placement"] == "in_place" and r["out_of_place"] is None and r["root"] == -1
        assert r["in_place"]["time_s"] == r["time_s"] and r["in_place"]["num_wrong"] == 0
        assert 0 < r["iter_min_s"] <= r["iter_p50_s"] <= r["iter_p99_s"] <= r["iter_max_s"]
        assert r["iter_p50_s"] == r["in_place"]["iter_p50_s"]
    assert meta["time_over_ranks"] == "max" and meta["placements"] == ["in_place"] and meta["graph_launches"] == 0


def test_run_sweeps_refuses_what_one_process_group_cannot_serve_before_starting(tmp_path):
    from gpucomm.measure import run_sweeps

    with pytest.raises(GpucommError, match="expected each at most once"):
        run_sweeps(2, ["all_reduce", "all_reduce"])
    with pytest.raises(GpucommError, match="expected out_dir=FOLDER"):
        run_sweeps(2, ["all_reduce"], out=tmp_path / "x.jsonl")
    if NUM_GPUS == 0:  # auto is gloo here, which has no reduce_scatter: refused before any rank starts
        with pytest.raises(GpucommError, match="reduce_scatter"):
            run_sweeps(2, ["all_reduce", "reduce_scatter"], max_bytes=64)


def test_second_run_right_after_gets_a_fresh_port(tmp_path):
    # Two runs back to back (in-process, then the CLI), each on a port picked when it starts:
    # no "Address already in use".
    results = run_sweep(num_ranks=2, min_bytes=8, max_bytes=64, step_factor=8, iters=2, warmup_iters=0,
                        print_table=False)
    assert results.num_wrong == 0 and len(results) == 2
    proc = run_cli("--ranks", "2", "-b", "1KiB", "-e", "4KiB", "-f", "4", "-n", "2", "-w", "1", "-d", "float64",
                   "-o", "prod", "--out", str(tmp_path / "prod.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert "Address already in use" not in proc.stderr
    check_records(read_results(tmp_path / "prod.jsonl"), sizes=[(1024, 128), (4096, 512)], num_ranks=2,
                  dtype="float64", op="prod")
    assert "#wrong" in proc.stdout and "busbw" in proc.stdout


def test_timed_iterations_shrink_only_when_asked():
    results = run_sweep(num_ranks=2, min_bytes=4 * KiB, max_bytes=4 * MiB, step_factor=32, iters=50, warmup_iters=1,
                        max_seconds_per_size=1e-3, print_table=False)
    iters = [r["iters"] for r in results]
    assert all(1 <= i <= 50 for i in iters) and iters[-1] < 50  # 4 MiB cannot run 50 times in 1 ms
    assert results.num_wrong == 0


def test_sizes_larger_than_free_memory_are_refused_before_any_rank_starts():
    with pytest.raises(GpucommError, match=r"^maximum size -e 1\.02e\+03 TiB needs about .* of host memory .* "
                                           r"expected -e at most") as info:
        run_sweep(num_ranks=2, min_bytes=2**50, max_bytes=2**50, iters=1, warmup_iters=0, backend="gloo",
                  print_table=False)
    assert "\n" not in str(info.value)


def test_too_many_gloo_ranks_for_the_cores_are_refused():
    with pytest.raises(GpucommError, match=r"^1000 gloo ranks on \d+ CPU cores: expected at most \d+"):
        run_sweep(num_ranks=1000, max_bytes=8, iters=1, warmup_iters=0, backend="gloo", print_table=False)


def test_a_failing_rank_stops_the_run_with_its_message(monkeypatch):
    # Skip the launcher's memory check: 1 PiB then reaches rank 0, whose allocation fails; the
    # launcher reports it in one line, with the rank.
    import gpucomm.measure.launch as launch

    monkeypatch.setattr(launch, "_check_resources", lambda *args: None)
    with pytest.raises(GpucommError, match=r"^rank \d: size 1125899906842624 B \(.*\) does not fit in cpu memory: expected a smaller -e") as info:  # noqa: E501
        run_sweep(num_ranks=2, min_bytes=2**50, max_bytes=2**50, iters=1, warmup_iters=0, backend="gloo",
                  print_table=False)
    assert "\n" not in str(info.value)


def _die_silently_on_rank_1(rank, num_ranks, port, send):
    """A launch_workers target (module level, so spawn can import it): rank 1 exits at once, rank 0 would wait."""
    if rank == 1:
        os._exit(3)
    time.sleep(60)


def test_the_rank_that_died_is_named_not_the_one_the_launcher_stopped():
    from gpucomm.measure.launch import launch_workers

    start = time.monotonic()
    with pytest.raises(GpucommError, match=r"^rank 1 exited with code 3 without an error message$"):
        launch_workers(_die_silently_on_rank_1, 2)
    assert time.monotonic() - start < 30  # rank 0 was stopped, not waited for


def test_a_missing_peer_fails_after_the_timeout_with_a_message():
    # Rank 0 of 2, and rank 1 never comes: the process group gives up after timeout_s.
    from gpucomm.measure.launch import free_port
    from gpucomm.measure.runner import run_rank

    start = time.monotonic()
    with pytest.raises(GpucommError, match=r"process group \(gloo, 2 ranks\) did not form within 2 s") as info:
        run_rank(SweepConfig(backend="gloo", max_bytes=64, timeout_s=2), rank=0, world_size=2, local_rank=0,
                 local_world_size=2, init_method=f"tcp://127.0.0.1:{free_port()}")
    assert time.monotonic() - start < 30 and "\n" not in str(info.value)
    assert not torch.distributed.is_initialized()


def _sigint_default() -> None:
    """In the child before it starts: SIGINT back to its default action, whatever the test run inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_killed_sweep_keeps_every_finished_size(tmp_path, sig):
    # 10,000 sizes (-f 1 -i 8: 8, 16, ... 80,000 B, the most a sweep may have) of 20 timed calls each: at least
    # 200,000 gloo calls, minutes on any machine, so the signal always lands mid-sweep however slow the poll below is
    out = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([*BENCH, "--ranks", "2", "-b", "8", "-e", "80000", "-f", "1", "-i", "8", "-n", "20", "-w", "1",
                             "--no-progress", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # Ctrl-C as a terminal gives it: a shell starts a background job (`make test &`, a script's
                            # `cmd &`) with SIGINT ignored, the child inherits that, and Python then installs no
                            # KeyboardInterrupt handler: the signal would be dropped and the sweep run on
                            preexec_fn=_sigint_default)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline:
            workers |= children_of(proc.pid)
            if out.exists() and out.read_text().count("\n") >= 4:  # metadata + 3 sizes
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        else:
            pytest.fail("no records within 60 s")
        workers |= children_of(proc.pid)
        if Path(f"/proc/{proc.pid}/task").exists():
            assert len(workers) >= 2  # the two ranks (and multiprocessing's resource tracker)
        proc.send_signal(sig)
        # generous: the launcher stops its ranks (SIGTERM, SIGKILL after STOP_GRACE_S) and Python exits; the test checks
        # what happens, not how fast
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert f"interrupted; finished sizes are in {out}" in stderr
    else:
        assert proc.returncode == -signal.SIGKILL
    # Every worker is gone (after SIGKILL of the launcher they notice within a second).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(alive(pid) for pid in workers):
        time.sleep(0.1)
    assert not [pid for pid in workers if alive(pid)]

    text = out.read_text()
    lines = text.splitlines()
    if not text.endswith("\n"):
        lines = lines[:-1]  # a line cut mid-write may only be the last one
    records = [json.loads(line) for line in lines]  # every complete line is valid JSON
    assert records[0]["record"] == "meta"
    sizes = [r["msg_bytes"] for r in records[1:]]
    assert len(sizes) >= 3 and sizes == [8 * (k + 1) for k in range(len(sizes))]
    assert len(sizes) < 10_000  # it was really cut short
    assert all(r["num_wrong"] == 0 for r in records[1:])
    saved = read_results(out)
    assert [r["msg_bytes"] for r in saved] == sizes


def test_torchrun_entry_point(tmp_path):
    out = tmp_path / "torchrun.jsonl"
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "-m",
                           "gpucomm", "bench", "-b", "8", "-e", "1KiB", "-f", "32", "-n", "2", "-w", "1",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = read_results(out)
    check_records(results, sizes=[(8, 2), (256, 64)], num_ranks=2)
    assert results.meta["launcher"] == "torchrun" and results.meta["num_ranks"] == 2
    assert proc.stdout.count("# Out of bounds values") == 1  # only rank 0 prints the table


def test_ranks_flag_is_refused_under_torchrun(monkeypatch):
    from gpucomm.cli import main

    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert main(["bench", "--ranks", "2", "--no-out"]) == 2


def test_wrong_results_mark_the_row_and_fail_the_command(monkeypatch, capsys):
    from gpucomm import cli
    from gpucomm.measure import launch

    record = {"msg_bytes": 8, "count": 2, "dtype": "float32", "op": "sum", "time_s": 1e-4,
              "algbw_bytes_per_s": 8e4, "busbw_bytes_per_s": 8e4, "num_wrong": 2}
    monkeypatch.setattr(launch, "launch_local", lambda config, n, reporter=None: SweepResults([record], {}))
    assert cli.main(["bench", "--ranks", "2", "--no-out"]) == 1
    assert "2 wrong elements at 1 sizes (first at 8 B)" in capsys.readouterr().err
    assert format_row(record).endswith("2  WRONG")
    # A record from before the placements (no "in_place" key) still prints, in its one column.
    assert "# Out of bounds values : 1 FAILED" in format_table(SweepResults([record]))


def test_correctness_check_counts_corrupted_elements(tmp_path):
    # One real (single-rank) gloo group in this process: the check counts exactly what differs.
    import torch.distributed as dist

    from gpucomm.measure.launch import free_port
    from gpucomm.measure.spec import REDUCE_OPS, get_spec

    spec = get_spec("all_reduce")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    try:
        for op in ("sum", "prod", "max", "min"):
            buffers = spec.alloc(1000, torch.float32, torch.device("cpu"), 1, in_place=True)
            spec.fill(buffers, op)
            spec.run(buffers, REDUCE_OPS[op])
            assert spec.count_wrong(buffers, op) == 0
            buffers.recv[[3, 500, 999]] += 0.5
            assert spec.count_wrong(buffers, op) == 3
    finally:
        dist.destroy_process_group()


def test_correctness_inputs_are_exact_in_every_dtype():
    from gpucomm.measure.spec import expected_value

    # Largest expected values stay where float16 (2048) and bfloat16 (256) are exact integers.
    assert max(expected_value(k, 64, "sum") for k in range(6)) <= 256
    assert max(expected_value(k, 45, "prod") for k in range(6)) <= 2**15


# --- NCCL (skipped without CUDA GPUs) ---------------------------------------------------

@needs_nccl
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_nccl_sweep_one_rank_per_gpu(tmp_path, dtype):
    n = min(NUM_GPUS, 2)
    results = run_sweep(num_ranks=n, min_bytes=8, max_bytes="1MiB", step_factor=8, iters=5, warmup_iters=2,
                        backend="nccl", dtype=dtype, out=tmp_path / "nccl.jsonl", print_table=False)
    elem = 4 if dtype == "float32" else 2
    check_records(results, sizes=sweep_sizes(8, MiB, 8, elem), num_ranks=n, dtype=dtype)
    assert results.meta["backend"] == "nccl" and results.meta["nccl_version"]
    assert all(d.startswith("cuda:") for d in results.meta["devices"])


@needs_nccl
def test_nccl_refuses_more_ranks_than_gpus():
    with pytest.raises(GpucommError, match="one rank per GPU"):
        run_sweep(num_ranks=NUM_GPUS + 1, backend="nccl", max_bytes=64)
    results = run_sweep(num_ranks=NUM_GPUS + 1, max_bytes=64, iters=1, warmup_iters=0, print_table=False)
    assert results.meta["backend"] == "gloo" and "only" in results.meta["backend_note"]


def test_results_reader_skips_a_cut_last_line_and_rejects_garbage(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"record": "meta", "num_ranks": 2}\n{"record": "result", "msg_bytes": 8}\n{"record": "res')
    saved = read_results(path)
    assert saved.meta["num_ranks"] == 2 and [r["msg_bytes"] for r in saved] == [8]
    path.write_text('{"record": "meta"}\nnot json\n')
    with pytest.raises(GpucommError, match="line 2 is not valid JSON"):
        read_results(path)
    with pytest.raises(GpucommError, match="cannot be read"):
        read_results(tmp_path / "missing.jsonl")
    assert os.path.exists(path)


# --- nccl-tests conventions: -a, per-iteration times, the table, the summary -----------------

class _ThreeRanks:
    """A stand-in for ``torch.distributed`` as rank 1 of 3 sees it, the ranks holding 1, 2 and 3 s: its broadcast and
    all_reduce compute what the real ones return, so :func:`reduce_over_ranks` is tested as a function, no ranks."""

    values = (1.0, 2.0, 3.0)

    class ReduceOp:
        SUM, MIN, MAX = "sum", "min", "max"

    def broadcast(self, tensor, src):
        tensor.fill_(self.values[src])

    def all_reduce(self, tensor, op):
        tensor.fill_({"sum": sum, "min": min, "max": max}[op](self.values))


def test_time_over_ranks_is_nccl_tests_average_flag(monkeypatch):
    # nccl-tests -a <0/1/2/3>: 0=RANK0, 1=AVG, 2=MIN, 3=MAX (src/common.cu); ranks hold 1, 2, 3.
    from gpucomm.measure import runner

    monkeypatch.setattr(runner, "dist", _ThreeRanks())
    reduced = {how: runner.reduce_over_ranks(2.0, how, torch.device("cpu"), 3) for how in ("rank0", "avg", "min", "max")}
    assert reduced == {"rank0": 1.0, "avg": 2.0, "min": 1.0, "max": 3.0}
    with pytest.raises(GpucommError, match="time over ranks 'mean' is not valid"):
        runner.reduce_over_ranks(2.0, "mean", torch.device("cpu"), 3)


def test_time_over_ranks_reaches_the_metadata_and_header(capsys):
    results = run_sweep(num_ranks=2, max_bytes=64, step_factor=8, iters=2, warmup_iters=0, time_over_ranks="min",
                        progress=False)
    assert results.meta["time_over_ranks"] == "min" and "minimum over ranks" in results.meta["timing"]
    assert "# time: one operation, the minimum over ranks (-a 2)" in capsys.readouterr().out


def test_iteration_stats_are_nccl_tests_compute_iter_stats():
    from gpucomm.measure.runner import iteration_stats

    times = [float(t) for t in range(200, 0, -1)]  # 1..200, unsorted
    stats = iteration_stats(times)
    # p50 = sorted[n / 2]; p99 = sorted[min(n - 1, ceil(n * 99 / 100) - 1)] (src/util.cu, percentileIndex)
    assert stats["iter_p50_s"] == 101.0 and stats["iter_p99_s"] == 198.0
    assert stats["iter_min_s"] == 1.0 and stats["iter_max_s"] == 200.0 and stats["iter_mean_s"] == 100.5
    assert iteration_stats([5.0, 1.0, 3.0])["iter_p99_s"] == 5.0  # below 100 samples p99 may be the maximum
    assert iteration_stats([])["iter_p50_s"] is None


def test_one_rank_says_busbw_is_zero_by_definition(capsys):
    results = run_sweep(num_ranks=1, max_bytes=64, step_factor=8, iters=2, warmup_iters=0, backend="gloo",
                        progress=False)
    assert all(r["busbw_bytes_per_s"] == 0 for r in results)
    lines = capsys.readouterr().out.splitlines()
    note = [line for line in lines if line.startswith("# busbw is 0 on 1 rank")]
    assert note == ["# busbw is 0 on 1 rank by definition: all_reduce's bus factor is 0 at n = 1, no data crosses a "
                    "link (nccl-tests doc/PERFORMANCE.md); algbw is the figure to read"]
    assert lines.index(note[0]) > lines.index("# Avg bus bandwidth    : 0")  # under the table


def _record(collective="all_gather", **overrides):
    one = {"time_s": 12.3456e-6, "algbw_bytes_per_s": 0.16e9, "busbw_bytes_per_s": 0.08e9, "num_wrong": 0,
           "num_wrong_ranks": 0, "iters": 20, "iter_min_s": 11e-6, "iter_p50_s": 12e-6, "iter_p99_s": 20e-6,
           "iter_max_s": 20e-6, "iter_mean_s": 12.5e-6, "iter_stdev_s": 2.5e-6}
    record = {"record": "result", "collective": collective, "msg_bytes": 2048, "count": 512, "dtype": "float32",
              "op": "none", "num_ranks": 2, "iters": 20, "blocks": 1, "warmup_iters": 5, **one, "placement": "out_of_place",
              "root": -1, "out_of_place": dict(one), "in_place": dict(one, time_s=1234.5678e-6)}
    record.update(overrides)
    return record


def test_table_is_nccl_tests_layout_out_of_place_then_in_place():
    from gpucomm.measure.results import SWEEP_TABLE

    header = SWEEP_TABLE.header({}).splitlines()
    # writeResultHeader (src/util.cu, v2.19.6), without the timestamp column:
    titles = ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s"
              % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                 "time", "algbw", "busbw", "#wrong"))
    units = ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s"
             % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    assert header[-2:] == [titles, units]
    assert header[-3].split() == ["#", "out-of-place", "in-place"]
    assert header[-3].index("out-of-place") < titles.index("#wrong") < header[-3].index("in-place")
    # writeBenchmarkLinePreamble + writeBenchmarkLineBody twice; count is per rank for all_gather (paramcount).
    row = SWEEP_TABLE.row(_record())
    assert row == ("%12li  %12li  %8s  %6s  %6s" % (2048, 256, "float32", "none", "-1")
                   + "  %7s  %6s  %6s  %6g" % ("12.35", "0.16", "0.08", 0)
                   + "  %7s  %6s  %6s  %6g" % ("1234.57", "0.16", "0.08", 0))


def test_table_rows_read_back_by_the_nccl_tests_log_parser():
    from gpucomm.measure.logs.nccl_tests import parse_nccl_tests

    records = [_record(msg_bytes=2048 * 4**k, count=512 * 4**k) for k in range(3)]
    parsed = parse_nccl_tests(format_table(SweepResults(records)), collective="all_gather")
    assert [(r.size_bytes, r.in_place) for r in parsed.records] == [(2048 * 4**k, p) for k in range(3) for p in (0, 1)]
    assert [r.time_us for r in parsed.in_place()] == [1234.57] * 3
    assert [r.count for r in parsed.out_of_place()] == [256, 1024, 4096]


def test_missing_and_unchecked_placements_print_as_nccl_tests():
    from gpucomm.measure.results import SWEEP_TABLE

    row = SWEEP_TABLE.row(_record("all_reduce", out_of_place=None, placement="in_place", op="sum", count=512))
    assert row.startswith("%12li  %12li  %8s  %6s  %6s" % (2048, 512, "float32", "sum", "-1") + " " * 33)
    unchecked = SWEEP_TABLE.row(_record("send_recv", in_place=dict(_record()["in_place"], num_wrong=None), count=512))
    assert unchecked.endswith("    N/A") and unchecked.split()[1] == "512"


def test_summary_is_nccl_tests_footer_and_never_scientific():
    small = [_record(busbw_bytes_per_s=5.12345e4, out_of_place=dict(_record()["out_of_place"], busbw_bytes_per_s=5.12345e4),
                     in_place=dict(_record()["in_place"], busbw_bytes_per_s=5.12345e4))]
    footer = format_table(SweepResults(small)).splitlines()[-2:]
    # writeResultFooter: "# %-20s : %d %s" and "# %-20s : %g" (here %g's digits without the exponent)
    assert footer == ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 0.0000512345"]
    bad = _record(in_place=dict(_record()["in_place"], num_wrong=7, num_wrong_ranks=2), num_wrong=7)
    assert "# Out of bounds values : 2 FAILED" in format_table(SweepResults([bad]))  # counted per rank, as nccl-tests
    off = _record(num_wrong=None, out_of_place=dict(_record()["out_of_place"], num_wrong=None),
                  in_place=dict(_record()["in_place"], num_wrong=None))
    assert "# Out of bounds values : N/A (check off)" in format_table(SweepResults([off]))


def test_per_iteration_columns_with_dash_I():
    from gpucomm.measure.results import sweep_table

    table = sweep_table(per_iteration=True)
    header = table.header({}).splitlines()
    assert header[-3].split() == ["#", "out-of-place", "(+", "per-iteration)", "in-place", "(+", "per-iteration)"]
    assert header[-2].split()[-4:] == ["i_min", "i_max", "i_p99", "i_cv%"]
    assert "i_* : per" not in header[0] and header[-4].startswith("# i_*: per-iteration times, each the maximum over ranks")
    cells = table.row(_record()).split()
    assert cells[9:13] == ["11.00", "20.00", "20.00", "20.00"]  # i_min, i_max, i_p99 (us), i_cv% = 2.5 / 12.5
    graph = _record(out_of_place=dict(_record()["out_of_place"], iter_min_s=None, iter_max_s=None, iter_p99_s=None,
                                      iter_mean_s=None, iter_stdev_s=None))
    assert table.row(graph).split()[9:13] == ["N/A"] * 4  # no per-iteration times under CUDA graphs


def test_results_file_that_cannot_be_written_is_refused_before_any_rank_starts(tmp_path, monkeypatch):
    import gpucomm.measure.launch as launch

    def never(*args, **kwargs):
        raise AssertionError("a rank was started")

    monkeypatch.setattr(launch, "launch_workers", never)
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for out, match in [("/proc/gpucomm-bench.jsonl", r"results file '/proc/gpucomm-bench.jsonl' cannot be written: "),
                       (a_file / "sub" / "r.jsonl", r"is a file, not a folder: expected --out in a folder you can write"),
                       (tmp_path, r"is a folder: expected a file name such as")]:
        with pytest.raises(GpucommError, match=match) as info:
            run_sweep(num_ranks=2, max_bytes=64, out=out, print_table=False)
        assert "\n" not in str(info.value)


# --- NCCL only: CUDA graphs and per-iteration CUDA events (skipped without CUDA GPUs) ------

@needs_nccl
def test_nccl_cuda_graph_launches_and_per_iteration_events():
    n = min(NUM_GPUS, 2)
    graphs = run_sweep(num_ranks=n, min_bytes=8, max_bytes="1MiB", step_factor=64, iters=5, warmup_iters=2,
                       backend="nccl", graph_launches=3, print_table=False)
    check_records(graphs, sizes=sweep_sizes(8, MiB, 64, 4), num_ranks=n)
    assert graphs.meta["graph_launches"] == 3 and all(r["iter_p50_s"] is None for r in graphs)
    eager = run_sweep(num_ranks=n, min_bytes=8, max_bytes="1MiB", step_factor=64, iters=5, warmup_iters=2,
                      backend="nccl", print_table=False)
    for r in eager:
        assert 0 < r["iter_min_s"] <= r["iter_p50_s"] <= r["iter_p99_s"] <= r["iter_max_s"]
        # CUDA events between calls: together they cover about the host-clock block, never much more
        assert r["iter_mean_s"] <= 1.5 * r["time_s"] + 20e-6
