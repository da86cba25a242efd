"""The collectives beyond all_reduce: 2-rank gloo sweeps, their checks, sizes and busbw, and what gloo refuses.

Real process groups with small sizes (a few seconds per collective on 2 CPU cores), out-of-place
and in-place as nccl-tests, plus the correctness checks of every spec replayed in one process
against a reference of what the collective must do, with data placed wrongly on purpose: that
covers reduce_scatter too, which gloo does not run, and both placements of each buffer layout.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from gpucomm import GpucommError  # noqa: E402
from gpucomm.measure import SweepConfig, read_results, run_sweep  # noqa: E402
from gpucomm.measure.config import (  # noqa: E402
    BENCH_COLLECTIVES,
    CHUNKED_COLLECTIVES,
    PLACEMENTS,
    UNSUPPORTED,
    check_backend_collective,
    supported_collectives,
    sweep_sizes,
)
from gpucomm.measure.spec import REDUCE_OPS, SPEC_MODULES, get_spec  # noqa: E402
from gpucomm.model.collectives import busbw_factor  # noqa: E402

KiB, MiB = 2**10, 2**20
GLOO_COLLECTIVES = [c for c in BENCH_COLLECTIVES if c != "all_reduce" and c not in UNSUPPORTED["gloo"]]


def check_sweep(results, collective, num_ranks, sizes, op="sum"):
    assert [(r["msg_bytes"], r["count"]) for r in results] == sizes
    factor = busbw_factor(collective, num_ranks)
    assert results.meta["busbw_factor"] == factor
    spec = get_spec(collective)
    for r in results:
        assert r["collective"] == collective and r["num_ranks"] == num_ranks
        assert r["num_wrong"] == 0, r
        assert r["op"] == (op if collective in ("all_reduce", "reduce_scatter") else "none")
        assert r["root"] == (0 if collective == "broadcast" else -1)
        # Both placements where torch.distributed has them, out-of-place first as nccl-tests.
        assert [p for p in PLACEMENTS if r[p] is not None] == [p for p in PLACEMENTS if p in spec.placements]
        assert r["placement"] == spec.placements[0] and r["time_s"] == r[r["placement"]]["time_s"]
        for placement in spec.placements:
            m = r[placement]
            assert m["time_s"] > 0 and m["num_wrong"] == (0 if spec.checked(placement) else None), (placement, m)
            assert m["algbw_bytes_per_s"] == pytest.approx(r["msg_bytes"] / m["time_s"])
            assert m["busbw_bytes_per_s"] == pytest.approx(m["algbw_bytes_per_s"] * factor)
            assert 0 < m["iter_min_s"] <= m["iter_p50_s"] <= m["iter_p99_s"] <= m["iter_max_s"]
        assert r["algbw_bytes_per_s"] == pytest.approx(r["msg_bytes"] / r["time_s"])
        assert r["busbw_bytes_per_s"] == pytest.approx(r["algbw_bytes_per_s"] * factor)


# --- real 2-rank gloo sweeps --------------------------------------------------------------

@pytest.mark.parametrize("collective", GLOO_COLLECTIVES)
def test_gloo_sweep_two_ranks(collective, gloo_sweeps):
    # the session's one 2-rank gloo run of every collective (tests/measure/conftest.py), 4 B to 256 KiB, x8
    results = gloo_sweeps.results[collective]
    multiple = 2 if collective in CHUNKED_COLLECTIVES else 1
    sizes = sweep_sizes(4, 256 * KiB, 8, 4, count_multiple=multiple)
    assert sizes[0] == ((8, 2) if multiple == 2 else (4, 1))
    check_sweep(results, collective, 2, sizes, op="prod")
    assert results.meta["collective"] == collective and results.ok
    saved = read_results(gloo_sweeps.out_dir / f"{collective}.jsonl")
    assert list(saved) == list(results) and saved.meta["collective"] == collective
    assert f"# gpucomm.measure {collective}: 2 ranks, backend gloo" in gloo_sweeps.printed


def test_algbw_differs_while_busbw_is_the_same_formula():
    # On 2 ranks all_gather's factor is 1/2: the same time gives half the busbw of broadcast's.
    assert busbw_factor("all_gather", 2) == busbw_factor("all_to_all", 2) == busbw_factor("reduce_scatter", 2) == 0.5
    assert busbw_factor("broadcast", 2) == busbw_factor("send_recv", 2) == 1.0
    assert busbw_factor("all_gather", 8) == 0.875


def test_send_recv_is_nccl_tests_ring_over_all_ranks(capsys):
    # nccl-tests src/sendrecv.cu: rank r sends to r + 1 and receives from r - 1, every rank at once.
    from gpucomm.measure.collectives.send_recv import recv_peer, send_peer

    assert [send_peer(r, 3) for r in range(3)] == [1, 2, 0] and [recv_peer(r, 3) for r in range(3)] == [2, 0, 1]
    spec = get_spec("send_recv")
    results = run_sweep(num_ranks=3, collective="send_recv", min_bytes=8, max_bytes=64, step_factor=8, iters=3,
                        warmup_iters=1, backend="gloo")
    assert results.meta["timing_note"] == spec.timing_note
    out = capsys.readouterr().out
    assert ("# send_recv: every rank sends to rank + 1 and receives from rank - 1 at once, a ring "
            "(nccl-tests sendrecv_perf)") in out
    assert "# in-place #wrong: N/A, nccl-tests does not check in-place sendrecv (src/sendrecv.cu)" in out
    # Rank 2 checked what it received from rank 1: a ping-pong between ranks 0 and 1 would leave it wrong.
    check_sweep(results, "send_recv", 3, [(8, 2), (64, 16)])


def test_op_on_a_collective_that_does_not_reduce_is_said_to_be_ignored(gloo_sweeps):
    results = gloo_sweeps.results["all_gather"]  # the session's run, -o prod (tests/measure/conftest.py)
    assert {r["op"] for r in results} == {"none"}  # as nccl-tests: redop none
    assert results.meta["requested_op"] == "prod" and results.meta["op_ignored"] is True
    assert "# -o prod ignored: all_gather does not reduce (redop none, as nccl-tests)" in gloo_sweeps.printed
    assert {r["op"] for r in gloo_sweeps.results["all_reduce"]} == {"prod"}
    assert SweepConfig(collective="all_reduce", op="prod").op_ignored is False
    assert SweepConfig(collective="broadcast").op_ignored is False  # -o sum is the default, nothing was asked


def test_send_recv_needs_two_ranks():
    with pytest.raises(GpucommError, match="send_recv needs at least 2 ranks, but 1 was asked for"):
        run_sweep(num_ranks=1, collective="send_recv")


def test_env_reaches_the_ranks_only(gloo_sweeps):
    # the session's run set NCCL_ALGO and NCCL_P2P_DISABLE for its ranks only (tests/measure/conftest.py)
    results = gloo_sweeps.results["broadcast"]
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
        assert spec.placements and set(spec.placements) <= set(PLACEMENTS) and set(spec.unchecked) <= set(spec.placements)
        if len(spec.placements) < len(PLACEMENTS) or spec.unchecked:
            assert spec.placement_note  # the table says why a column is empty or N/A
    # torch.distributed's all_reduce and broadcast work in place only (no send buffer argument)
    assert get_spec("all_reduce").placements == get_spec("broadcast").placements == ("in_place",)
    with pytest.raises(GpucommError, match="all_reduce has no out-of-place call in torch.distributed"):
        get_spec("all_reduce").alloc(8, torch.float32, torch.device("cpu"), 2, rank=0)


# --- the checks, replayed in one process --------------------------------------------------

def simulate(collective, bufs, op):
    """What the collective must do, on every rank's buffers at once (the reference)."""
    n = len(bufs)
    sends = [b.send.clone() for b in bufs]  # in place, writing one output may overwrite an input
    if collective == "all_gather":
        out = torch.cat(sends)
        for b in bufs:
            b.recv.copy_(out)
    elif collective in ("reduce_scatter", "all_reduce"):
        stacked = torch.stack(sends)
        red = {"sum": stacked.sum(0), "prod": stacked.prod(0), "max": stacked.amax(0), "min": stacked.amin(0)}[op]
        for r, b in enumerate(bufs):
            b.recv.copy_(red.chunk(n)[r] if collective == "reduce_scatter" else red)
    elif collective == "all_to_all":
        for q, b in enumerate(bufs):
            b.recv.copy_(torch.cat([send.chunk(n)[q] for send in sends]))
    elif collective == "broadcast":
        for b in bufs:
            b.recv.copy_(sends[0])
    elif collective == "send_recv":  # the ring: rank r receives what rank r - 1 sent
        for r, b in enumerate(bufs):
            b.recv.copy_(sends[(r - 1) % n])


@pytest.mark.parametrize("collective", BENCH_COLLECTIVES)
@pytest.mark.parametrize("num_ranks", [2, 3, 4])
def test_checks_pass_on_the_right_answer_and_catch_misplaced_data(collective, num_ranks):
    spec = get_spec(collective)
    ops = ["sum", "prod", "max", "min"] if collective in ("reduce_scatter", "all_reduce") else ["sum"]
    for placement in [p for p in spec.placements if spec.checked(p)]:
        for op in ops:
            count = 12 * num_ranks  # whole chunks, and chunk lengths that are multiples of the pattern periods
            bufs = [spec.alloc(count, torch.float32, torch.device("cpu"), num_ranks, rank=rank,
                               in_place=placement == "in_place") for rank in range(num_ranks)]
            for b in bufs:
                spec.fill(b, op)
            before = [spec.count_wrong(b, op) for b in bufs]
            assert sum(before) > 0, "a collective that did nothing must fail the check"
            simulate(collective, bufs, op)
            assert [spec.count_wrong(b, op) for b in bufs] == [0] * num_ranks, (placement, op)
            # Swap two chunks (or corrupt one element) of rank 1's output: the check must see it.
            recv = bufs[1].recv
            if collective in ("all_gather", "all_to_all"):
                chunk = recv.numel() // num_ranks
                first, second = recv[:chunk].clone(), recv[chunk:2 * chunk].clone()
                recv[:chunk], recv[chunk:2 * chunk] = second, first
                assert spec.count_wrong(bufs[1], op) > 0
            else:
                recv[5] += 1
                assert spec.count_wrong(bufs[1], op) == 1


def test_in_place_buffers_are_nccl_tests_views_of_one_buffer():
    # startColl: in place, sendbuff = recvbuff + sendInplaceOffset * rank (and recv likewise).
    gather = get_spec("all_gather").alloc(12, torch.float32, torch.device("cpu"), 3, rank=2, in_place=True)
    assert gather.send.data_ptr() == gather.recv.data_ptr() + 2 * 4 * 4 and gather.recv.numel() == 12
    scatter = get_spec("reduce_scatter").alloc(12, torch.float32, torch.device("cpu"), 3, rank=1, in_place=True)
    assert scatter.recv.data_ptr() == scatter.send.data_ptr() + 4 * 4 and scatter.send.numel() == 12
    ring = get_spec("send_recv").alloc(8, torch.float32, torch.device("cpu"), 2, rank=0, in_place=True)
    assert ring.send.data_ptr() == ring.recv.data_ptr()
    apart = get_spec("all_gather").alloc(12, torch.float32, torch.device("cpu"), 3, rank=2)
    assert apart.send.data_ptr() != apart.recv.data_ptr() and not apart.in_place


def test_reduce_scatter_chunks_differ_so_a_wrong_chunk_is_caught():
    # Rank 0 receiving rank 1's chunk must be wrong even when chunks are a whole number of pattern periods.
    spec = get_spec("reduce_scatter")
    n, count = 2, 24
    bufs = [spec.alloc(count, torch.float32, torch.device("cpu"), n, rank=rank) for rank in range(n)]
    for b in bufs:
        spec.fill(b, "sum")
    simulate("reduce_scatter", bufs, "sum")
    bufs[0].recv.copy_(bufs[1].recv)
    assert spec.count_wrong(bufs[0], "sum") > 0


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
            for placement in spec.placements:
                buffers = spec.alloc(64, torch.float32, torch.device("cpu"), 1, in_place=placement == "in_place")
                spec.fill(buffers, "sum")
                spec.run(buffers, REDUCE_OPS["sum"])
                assert spec.count_wrong(buffers, "sum") == 0, (collective, placement)
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
