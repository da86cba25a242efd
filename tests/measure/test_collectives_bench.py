"""The collectives beyond all_reduce: 2-rank gloo sweeps, their checks, sizes and busbw, and what gloo refuses.

Real process groups with small sizes (a few seconds per collective on 2 CPU cores), plus the
correctness checks of every spec replayed in one process against a reference of what the
collective must do, with data placed wrongly on purpose: that covers reduce_scatter too,
which gloo does not run.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from gpucomm import GpucommError  # noqa: E402
from gpucomm.measure import SweepConfig, read_results, run_sweep  # noqa: E402
from gpucomm.measure.config import (BENCH_COLLECTIVES, CHUNKED_COLLECTIVES, UNSUPPORTED, check_backend_collective,  # noqa: E402
                                  supported_collectives, sweep_sizes)
from gpucomm.measure.spec import REDUCE_OPS, SPEC_MODULES, get_spec  # noqa: E402
from gpucomm.model.collectives import busbw_factor  # noqa: E402

KiB, MiB = 2**10, 2**20
GLOO_COLLECTIVES = [c for c in BENCH_COLLECTIVES if c != "all_reduce" and c not in UNSUPPORTED["gloo"]]


def check_sweep(results, collective, num_ranks, sizes):
    assert [(r["msg_bytes"], r["count"]) for r in results] == sizes
    factor = busbw_factor(collective, num_ranks)
    assert results.meta["busbw_factor"] == factor
    for r in results:
        assert r["collective"] == collective and r["num_ranks"] == num_ranks
        assert r["num_wrong"] == 0, r
        assert r["op"] == ("sum" if collective in ("all_reduce", "reduce_scatter") else "none")
        assert r["time_s"] > 0
        assert r["algbw_bytes_per_s"] == pytest.approx(r["msg_bytes"] / r["time_s"])
        assert r["busbw_bytes_per_s"] == pytest.approx(r["algbw_bytes_per_s"] * factor)


# --- real 2-rank gloo sweeps --------------------------------------------------------------

@pytest.mark.parametrize("collective", GLOO_COLLECTIVES)
def test_gloo_sweep_two_ranks(collective, tmp_path):
    out = tmp_path / f"{collective}.jsonl"
    # min 4 B: one float32 element, which a chunked collective on 2 ranks rounds up to 2 (one per rank).
    results = run_sweep(num_ranks=2, collective=collective, min_bytes=4, max_bytes="256KiB", step_factor=8,
                        iters=3, warmup_iters=1, backend="gloo", out=out, print_table=False)
    multiple = 2 if collective in CHUNKED_COLLECTIVES else 1
    sizes = sweep_sizes(4, 256 * KiB, 8, 4, count_multiple=multiple)
    assert sizes[0] == ((8, 2) if multiple == 2 else (4, 1))
    check_sweep(results, collective, 2, sizes)
    assert results.meta["collective"] == collective and results.ok
    saved = read_results(out)
    assert list(saved) == list(results) and saved.meta["collective"] == collective


def test_algbw_differs_while_busbw_is_the_same_formula():
    # On 2 ranks all_gather's factor is 1/2: the same time gives half the busbw of broadcast's.
    assert busbw_factor("all_gather", 2) == busbw_factor("all_to_all", 2) == busbw_factor("reduce_scatter", 2) == 0.5
    assert busbw_factor("broadcast", 2) == busbw_factor("send_recv", 2) == 1.0
    assert busbw_factor("all_gather", 8) == 0.875


def test_send_recv_reports_one_way_time_and_says_so(capsys):
    spec = get_spec("send_recv")
    assert spec.ops_per_run == 2 and "half the round trip" in spec.timing_note
    results = run_sweep(num_ranks=2, collective="send_recv", min_bytes=8, max_bytes=64, step_factor=8, iters=3,
                        warmup_iters=1, backend="gloo")
    assert results.meta["timing_note"] == spec.timing_note
    assert "# send_recv: ping-pong between ranks 0 and 1; time = one way, half the round trip" in capsys.readouterr().out
    check_sweep(results, "send_recv", 2, [(8, 2), (64, 16)])


def test_send_recv_needs_two_ranks():
    with pytest.raises(GpucommError, match="send_recv needs at least 2 ranks, but 1 was asked for"):
        run_sweep(num_ranks=1, collective="send_recv")


def test_env_reaches_the_ranks_only(tmp_path):
    assert "NCCL_ALGO" not in os.environ
    results = run_sweep(num_ranks=2, collective="broadcast", min_bytes=8, max_bytes=8, iters=1, warmup_iters=0,
                        backend="gloo", print_table=False, env={"NCCL_ALGO": "Ring", "NCCL_P2P_DISABLE": "1"})
    assert results.meta["env"]["NCCL_ALGO"] == "Ring" and results.meta["env"]["NCCL_P2P_DISABLE"] == "1"
    assert "NCCL_ALGO" not in os.environ  # the launcher's environment is left alone
    with pytest.raises(GpucommError, match="env .* is not valid"):
        run_sweep(num_ranks=2, env={"NCCL_ALGO": 1})


# --- what gloo does not run ---------------------------------------------------------------

def test_reduce_scatter_is_refused_on_gloo_with_a_clear_message():
    assert supported_collectives("gloo") == ("all_reduce", "all_gather", "broadcast", "all_to_all", "send_recv")
    assert supported_collectives("nccl") == BENCH_COLLECTIVES
    for call in (lambda: SweepConfig(collective="reduce_scatter", backend="gloo"),
                 lambda: check_backend_collective("gloo", "reduce_scatter")):
        with pytest.raises(GpucommError, match="reduce_scatter is not supported on gloo") as info:
            call()
        assert "\n" not in str(info.value) and "--backend nccl" in str(info.value)
    SweepConfig(collective="reduce_scatter", backend="nccl")  # fine until it runs


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU machine auto picks NCCL")
def test_reduce_scatter_fails_before_any_process_starts_on_cpu():
    with pytest.raises(GpucommError, match="reduce_scatter is not supported on gloo"):
        run_sweep(num_ranks=2, collective="reduce_scatter")  # auto -> gloo here


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU machine auto picks NCCL")
def test_cli_reduce_scatter_on_cpu_exits_2_with_one_line():
    proc = subprocess.run([sys.executable, "-m", "gpucomm", "bench", "--collective", "reduce_scatter", "--no-out"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpucomm bench: error: reduce_scatter is not supported on gloo")


def test_every_bench_collective_has_a_spec():
    assert set(SPEC_MODULES) == set(BENCH_COLLECTIVES)
    for collective in BENCH_COLLECTIVES:
        spec = get_spec(collective)
        assert spec.name == collective
        assert spec.busbw_factor(4) == busbw_factor(collective, 4)
        assert spec.msg_bytes(12, 4, 3) == 48  # S = count x element size (count is the total where chunked)


# --- the checks, replayed in one process --------------------------------------------------

def simulate(collective, bufs, op):
    """What the collective must do, on every rank's buffers at once (the reference)."""
    n = len(bufs)
    if collective == "all_gather":
        out = torch.cat([send for send, _ in bufs])
        for _, recv in bufs:
            recv.copy_(out)
    elif collective == "reduce_scatter":
        red = {"sum": torch.stack([s for s, _ in bufs]).sum(0), "prod": torch.stack([s for s, _ in bufs]).prod(0),
               "max": torch.stack([s for s, _ in bufs]).amax(0), "min": torch.stack([s for s, _ in bufs]).amin(0)}[op]
        for r, (_, recv) in enumerate(bufs):
            recv.copy_(red.chunk(n)[r])
    elif collective == "all_to_all":
        for q, (_, recv) in enumerate(bufs):
            recv.copy_(torch.cat([send.chunk(n)[q] for send, _ in bufs]))
    elif collective == "broadcast":
        for buf in bufs[1:]:
            buf.copy_(bufs[0])
    elif collective == "send_recv":
        bufs[1][1].copy_(bufs[0][0])
        bufs[0][1].copy_(bufs[1][1])
    elif collective == "all_reduce":
        total = torch.stack(bufs).sum(0)
        for buf in bufs:
            buf.copy_(total)


def recv_of(collective, buffers):
    return buffers if collective in ("broadcast", "all_reduce") else buffers[1]


@pytest.mark.parametrize("collective", [c for c in BENCH_COLLECTIVES if c != "all_reduce"])
@pytest.mark.parametrize("num_ranks", [2, 3, 4])
def test_checks_pass_on_the_right_answer_and_catch_misplaced_data(collective, num_ranks):
    spec = get_spec(collective)
    ops = ["sum", "prod", "max", "min"] if collective == "reduce_scatter" else ["sum"]
    for op in ops:
        count = 12 * num_ranks  # whole chunks, and chunk lengths that are multiples of the pattern periods
        bufs = [spec.alloc(count, torch.float32, torch.device("cpu"), num_ranks) for _ in range(num_ranks)]
        if collective == "send_recv":
            bufs = [(s, r, rank) for rank, (s, r, _) in enumerate(bufs)]
        for rank, b in enumerate(bufs):
            spec.fill(b, rank, num_ranks, op)
        before = [spec.count_wrong(b, rank, num_ranks, op) for rank, b in enumerate(bufs)]
        assert sum(before) > 0, "a collective that did nothing must fail the check"
        simulate(collective, bufs, op)
        assert [spec.count_wrong(b, rank, num_ranks, op) for rank, b in enumerate(bufs)] == [0] * num_ranks
        # Swap two chunks (or corrupt one element) of rank 1's output: the check must see it.
        recv = recv_of(collective, bufs[1])
        if collective in ("all_gather", "all_to_all"):
            chunk = recv.numel() // num_ranks
            first, second = recv[:chunk].clone(), recv[chunk:2 * chunk].clone()
            recv[:chunk], recv[chunk:2 * chunk] = second, first
            assert spec.count_wrong(bufs[1], 1, num_ranks, op) > 0
        else:
            recv[5] += 1
            assert spec.count_wrong(bufs[1], 1, num_ranks, op) == 1


def test_reduce_scatter_chunks_differ_so_a_wrong_chunk_is_caught():
    # Rank 0 receiving rank 1's chunk must be wrong even when chunks are a whole number of pattern periods.
    spec = get_spec("reduce_scatter")
    n, count = 2, 24
    bufs = [spec.alloc(count, torch.float32, torch.device("cpu"), n) for _ in range(n)]
    for rank, b in enumerate(bufs):
        spec.fill(b, rank, n, "sum")
    simulate("reduce_scatter", bufs, "sum")
    bufs[0][1].copy_(bufs[1][1])
    assert spec.count_wrong(bufs[0], 0, n, "sum") > 0


def test_spec_calls_run_on_a_real_one_rank_gloo_group():
    # The torch calls themselves (names and argument order), reduce_scatter included, on 1 rank.
    import torch.distributed as dist
    from gpucomm.measure.launch import free_port

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    try:
        for collective in BENCH_COLLECTIVES:
            if collective == "send_recv":
                continue  # needs a peer
            spec = get_spec(collective)
            buffers = spec.alloc(64, torch.float32, torch.device("cpu"), 1)
            spec.fill(buffers, 0, 1, "sum")
            spec.run(buffers, REDUCE_OPS["sum"])
            assert spec.count_wrong(buffers, 0, 1, "sum") == 0, collective
    finally:
        dist.destroy_process_group()


# --- NCCL (skipped without CUDA GPUs) -------------------------------------------------------

NUM_GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0


@pytest.mark.skipif(NUM_GPUS < 1 or not torch.distributed.is_nccl_available(), reason="NCCL tests need CUDA GPUs")
@pytest.mark.parametrize("collective", BENCH_COLLECTIVES)
def test_nccl_sweep_every_collective(collective):
    n = min(NUM_GPUS, 2)
    if n < 2 and collective == "send_recv":
        pytest.skip("send_recv needs 2 GPUs")
    results = run_sweep(num_ranks=n, collective=collective, min_bytes=8, max_bytes="1MiB", step_factor=8, iters=5,
                        warmup_iters=2, backend="nccl", print_table=False)
    multiple = n if collective in CHUNKED_COLLECTIVES else 1
    check_sweep(results, collective, n, sweep_sizes(8, MiB, 8, 4, count_multiple=multiple))
    assert results.meta["backend"] == "nccl"
