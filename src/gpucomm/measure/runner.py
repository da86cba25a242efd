"""One rank's sweep: process group, warm-up, timed blocks, the time over ranks, the check.

The method copies nccl-tests (``src/common.cu``, v2.19.6); the timing itself is the shared
harness (:mod:`gpucomm.measure.harness`, also used by copy bandwidth and the TP layer):

1. For each size, two measurements as nccl-tests makes them, out-of-place (separate send and
   receive buffers) then in-place (the output written over the input): the placements
   torch.distributed offers for the collective (all_reduce and broadcast exist in place only
   there; their out-of-place columns stay empty). Each allocates zeroed buffers and runs
   ``warmup_iters`` untimed operations.
2. Barrier, then time a block of ``iters`` back-to-back operations with the host clock
   (``time.perf_counter``); on GPUs the block ends with ``torch.cuda.synchronize`` (as
   nccl-tests ends its timer after a stream synchronize). Time per operation is block
   time / iters. With ``graph_launches`` N >= 1 (nccl-tests ``-G``) the ``iters`` operations
   are captured once in a CUDA graph and the block is N launches of it: time per operation
   is block time / (iters x N).
3. Reduce that time over ranks as nccl-tests ``-a`` says (``time_over_ranks``: rank 0's, the
   mean, the minimum or the maximum; the maximum by default here, the mean in nccl-tests:
   the slowest rank sets the pace of a collective). With ``blocks > 1``, steps 2-3 repeat
   and the median block is reported (an opt-in addition for noisy CPUs; nccl-tests runs
   one block).
4. Per-iteration times (nccl-tests ``-I 1``): every operation of the timed blocks is also
   timed on its own, without a synchronization (:func:`gpucomm.measure.harness.time_block_s`:
   CUDA events between calls on a GPU, the host clock between calls on the CPU); each
   iteration's time is the maximum over ranks (nccl-tests: "i_* uses max over process rows"),
   and the record keeps their minimum, median (p50), 99th percentile (nearest rank, as
   nccl-tests' ``computeIterStats``), maximum, mean and standard deviation
   (:func:`iteration_stats`). Not under CUDA graphs, where nccl-tests disables ``-I`` too.
5. A separate correctness pass: fill the buffers with small integers whose reduction is
   exact, run the operation once, count elements not equal to the exact answer, and sum
   that count over ranks (``#wrong``); placements nccl-tests does not check (in-place
   all_to_all and send_recv) report None.

Every rank computes the same records (times and counts are reduced over ranks); rank 0
prints them, writes them to the results file and hands them to a callback.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable

import torch
import torch.distributed as dist

from gpucomm import GpucommError
from gpucomm.measure.config import (
    PLACEMENTS,
    ROOT_RANK,
    ROOTED_COLLECTIVES,
    TIME_OVER_RANKS,
    SweepConfig,
    check_collective_ranks,
)
from gpucomm.measure.harness import (
    barrier,
    cuda_device_count,
    gather_rank_names,
    max_over_ranks,
    metadata_record,
    process_group,
    rank_device,
    resolve_backend,
    resolve_sweeps_backend,
    synchronize,
    time_block_s,
)
from gpucomm.measure.results import ITER_KEYS, ResultsWriter, SweepResults, TableReporter, check_results_path, sweep_record
from gpucomm.measure.spec import REDUCE_OPS, TORCH_DTYPES, Buffers, CollectiveSpec, get_spec
from gpucomm.model.collectives import algbw_bytes_per_s
from gpucomm.model.units import format_size

#: What each ``time_over_ranks`` value does, for the metadata's ``timing`` text.
_OVER_RANKS_TEXT = {"rank0": "rank 0's", "avg": "mean over ranks", "min": "minimum over ranks",
                    "max": "maximum over ranks"}


def collect_metadata(config: SweepConfig, *, backend: str, device: torch.device, world_size: int,
                     launcher: str, note: str | None) -> dict:
    """The sweep's metadata record (``"tool": "gpucomm.bench"``). Collective: every rank must call it.

    Every rank's host and device are gathered; the fields are those of
    :func:`gpucomm.measure.harness.metadata_record`, with the sweep's parameters, the busbw
    factor and the timing method after ``devices``; then (added with the out-of-place and
    in-place columns) ``step_bytes``, ``time_over_ranks``, ``graph_launches``,
    ``requested_op`` (``-o`` as given) and ``op_ignored``, ``placements`` (those measured),
    ``unchecked_placements`` and ``placement_note``.
    """
    rank_hosts, devices = gather_rank_names(device, world_size)
    spec = get_spec(config.collective)
    over = _OVER_RANKS_TEXT[config.time_over_ranks]
    block = (f"host clock around {config.graph_launches} launches of a CUDA graph of iters operations / "
             f"(iters x {config.graph_launches})" if config.graph_launches else
             "host clock per block of iters (after cuda synchronize on GPU) / iters")
    return metadata_record(
        "gpucomm.bench", rank_hosts=rank_hosts, devices=devices, argv=config.argv,
        num_ranks=world_size, backend=backend, backend_note=note, launcher=launcher,
        collective=config.collective, dtype=config.dtype, op=config.op_name, min_bytes=config.min_bytes,
        max_bytes=config.max_bytes, step_factor=config.step_factor, iters=config.iters, blocks=config.blocks,
        warmup_iters=config.warmup_iters, check=config.check, max_seconds_per_size=config.max_seconds_per_size,
        busbw_factor=spec.busbw_factor(world_size),
        timing=f"{block}, {over}, median over blocks",
        timing_note=spec.timing_note or None,
        step_bytes=config.step_bytes, time_over_ranks=config.time_over_ranks, graph_launches=config.graph_launches,
        requested_op=config.op, op_ignored=config.op_ignored,
        placements=[p for p in PLACEMENTS if p in spec.placements],
        unchecked_placements=[p for p in PLACEMENTS if p in spec.placements and not spec.checked(p)],
        placement_note=spec.placement_note or None,
        per_iteration=None if config.graph_launches else
        "each operation of the timed blocks on its own (CUDA events on GPU, host clock on CPU), max over ranks")


def reduce_over_ranks(value: float, how: str, device: torch.device, world_size: int) -> float:
    """One rank's time made one time for all ranks, as nccl-tests ``-a`` does. Collective.

    Parameters
    ----------
    value : float
        This rank's time, seconds.
    how : str
        One of ``config.TIME_OVER_RANKS``: ``rank0`` (rank 0's value, broadcast), ``avg``,
        ``min`` or ``max``.
    device : torch.device
        Where the float64 reduction runs (this rank's device).
    world_size : int
        Ranks in the group (the divisor of the mean).

    Returns
    -------
    float
        The same value on every rank.
    """
    if how not in TIME_OVER_RANKS:
        raise GpucommError(f"time over ranks {how!r} is not valid: expected one of {', '.join(TIME_OVER_RANKS)}")
    t = torch.tensor([value], dtype=torch.float64, device=device)
    if how == "rank0":
        dist.broadcast(t, src=0)
    else:
        op = {"avg": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}[how]
        dist.all_reduce(t, op=op)
    return float(t.item()) / (world_size if how == "avg" else 1)


def iteration_stats(times_s: list[float]) -> dict:
    """Summary of per-iteration times, as nccl-tests' ``computeIterStats`` (``src/util.cu``, v2.19.6).

    Parameters
    ----------
    times_s : list of float
        One time per iteration, seconds (here each already the maximum over ranks).

    Returns
    -------
    dict
        ``iter_min_s``, ``iter_p50_s`` (``sorted[n // 2]``), ``iter_p99_s`` (nearest rank:
        ``sorted[min(n - 1, ceil(n * 99 / 100) - 1)]``, so with fewer than 100 samples it may be
        the maximum), ``iter_max_s``, ``iter_mean_s`` and ``iter_stdev_s`` (population), seconds;
        all None without samples.

    Examples
    --------
    >>> stats = iteration_stats([float(t) for t in range(1, 11)])
    >>> stats["iter_p50_s"], stats["iter_p99_s"], stats["iter_max_s"]
    (6.0, 10.0, 10.0)
    """
    keys = ITER_KEYS
    n = len(times_s)
    if n == 0:
        return dict.fromkeys(keys)
    ordered = sorted(times_s)
    p99 = ordered[min(n - 1, (n * 99 + 99) // 100 - 1)]
    mean = sum(ordered) / n
    stdev = math.sqrt(sum((t - mean) ** 2 for t in ordered) / n)
    return dict(zip(keys, (ordered[0], ordered[n // 2], p99, ordered[-1], mean, stdev)))


def capture_graph(fn: Callable[[], object], iters: int, device: torch.device):
    """``iters`` calls of ``fn`` captured in one CUDA graph (nccl-tests ``-G``), ready to launch.

    Capture runs on a side stream in thread-local mode, as nccl-tests captures
    (``cudaStreamCaptureModeThreadLocal``); the calls must have run eagerly before (the warm-up),
    so that NCCL's communicator exists and nothing is allocated during capture.
    """
    graph = torch.cuda.CUDAGraph()
    synchronize(device)
    with torch.cuda.device(device), torch.cuda.graph(graph, capture_error_mode="thread_local"):
        for _ in range(iters):
            fn()
    synchronize(device)
    return graph


def _alloc(spec: CollectiveSpec, config: SweepConfig, *, msg_bytes: int, count: int, device: torch.device,
           rank: int, world_size: int, in_place: bool) -> Buffers:
    """The buffers of one measurement, or one line saying the size does not fit."""
    try:
        return spec.alloc(count, TORCH_DTYPES[config.dtype], device, world_size, rank=rank, in_place=in_place)
    except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:  # CUDA OOM, or the CPU allocator's RuntimeError
        if not isinstance(exc, torch.cuda.OutOfMemoryError) and "allocate" not in str(exc):
            raise
        raise GpucommError(f"size {msg_bytes} B ({format_size(msg_bytes)}) does not fit in {device.type} memory: "
                           "expected a smaller -e") from None


def measure_placement(spec: CollectiveSpec, config: SweepConfig, buffers: Buffers, *, msg_bytes: int,
                      device: torch.device, world_size: int, placement: str) -> dict:
    """Warm up, time and check one placement of one size. Collective: every rank must call it.

    Returns
    -------
    dict
        ``time_s`` (per operation, reduced over ranks by ``config.time_over_ranks``, median of
        blocks), ``algbw_bytes_per_s``, ``busbw_bytes_per_s``, ``num_wrong`` (summed over ranks;
        None with the check off or for a placement nccl-tests does not check),
        ``num_wrong_ranks`` (ranks that saw a wrong element, what nccl-tests counts as "Out of
        bounds values"), ``iters`` and the per-iteration statistics of :func:`iteration_stats`
        (None under CUDA graphs).
    """
    op = REDUCE_OPS[config.op]

    def run() -> None:
        spec.run(buffers, op)

    iters = config.iters
    launches = config.graph_launches
    # Before a capture at least one eager call, as nccl-tests' "Sync" call in BenchTime: NCCL connects
    # peers lazily, and a connection made during capture would allocate memory there.
    if config.warmup_iters or config.max_seconds_per_size or launches:
        # The warm-up is timed as a block: its time sizes the timed blocks under --max-seconds-per-size.
        warm_s = time_block_s(run, max(1, config.warmup_iters), device=device, across_ranks=True)
        if config.max_seconds_per_size:
            # All ranks must run the same number of operations: agree on the slowest estimate.
            warm_s = max_over_ranks(warm_s, device)
            iters = max(1, min(config.iters, int(config.max_seconds_per_size / max(warm_s, 1e-9))))
    graph = capture_graph(run, iters, device) if launches else None
    block_times_s: list[float] = []
    iteration_s: list[float] = []
    for _ in range(config.blocks):
        if graph is not None:
            barrier(device)
            synchronize(device)
            start_s = time.perf_counter()
            for _ in range(launches):
                graph.replay()
            synchronize(device)
            block_s = (time.perf_counter() - start_s) / (iters * launches)
        else:
            calls_s: list[float] = []
            block_s = time_block_s(run, iters, device=device, across_ranks=True, iteration_s=calls_s)
            per_call = torch.tensor(calls_s, dtype=torch.float64, device=device)
            dist.all_reduce(per_call, op=dist.ReduceOp.MAX)
            iteration_s.extend(per_call.tolist())
        block_times_s.append(reduce_over_ranks(block_s, config.time_over_ranks, device, world_size))
    del graph
    time_s = statistics.median(block_times_s)
    num_wrong = num_wrong_ranks = None
    if config.check and spec.checked(placement):
        spec.fill(buffers, config.op)
        run()
        synchronize(device)
        wrong = spec.count_wrong(buffers, config.op)
        counts = torch.tensor([wrong, int(wrong > 0)], dtype=torch.int64, device=device)
        dist.all_reduce(counts, op=dist.ReduceOp.SUM)
        num_wrong, num_wrong_ranks = (int(v) for v in counts.tolist())
    algbw = algbw_bytes_per_s(msg_bytes, time_s)
    return {"time_s": time_s, "algbw_bytes_per_s": algbw, "busbw_bytes_per_s": algbw * spec.busbw_factor(world_size),
            "num_wrong": num_wrong, "num_wrong_ranks": num_wrong_ranks, "iters": iters,
            **iteration_stats(iteration_s)}


def measure_size(spec: CollectiveSpec, config: SweepConfig, *, msg_bytes: int, count: int, device: torch.device,
                 rank: int, world_size: int) -> dict:
    """Measure one message size out-of-place and in-place; returns the result record (same on all ranks).

    Collective: every rank must call it with the same arguments.

    The record keeps the fields it always had, for the measurement named by ``placement``: the
    out-of-place one where torch.distributed has it, else the in-place one (all_reduce,
    broadcast), which is what was measured before both were: ``time_s``, ``algbw_bytes_per_s``,
    ``busbw_bytes_per_s``, ``iters``; ``num_wrong`` is the sum over the checked placements.
    Added: ``placement``, ``root`` (nccl-tests' root column: the root rank, or -1), the
    per-iteration statistics of that measurement (``iter_p50_s``, ``iter_p99_s``, ...), and
    ``out_of_place`` and ``in_place``: each measurement's dict
    (:func:`measure_placement`), or None where it was not measured; built by
    :func:`gpucomm.measure.results.sweep_record`, as ``gpucomm parse`` builds its records.
    """
    algbw_bytes = spec.msg_bytes(count, config.elem_bytes, world_size)  # S of doc/PERFORMANCE.md
    measured: dict[str, dict | None] = {}
    for placement in PLACEMENTS:
        if placement not in spec.placements:
            measured[placement] = None
            continue
        buffers = _alloc(spec, config, msg_bytes=msg_bytes, count=count, device=device, rank=rank,
                         world_size=world_size, in_place=placement == "in_place")
        measured[placement] = measure_placement(spec, config, buffers, msg_bytes=algbw_bytes, device=device,
                                                world_size=world_size, placement=placement)
        del buffers  # one placement's buffers at a time
    return sweep_record(collective=spec.name, msg_bytes=msg_bytes, count=count, dtype=config.dtype,
                        op=config.op_name, num_ranks=world_size, blocks=config.blocks,
                        warmup_iters=config.warmup_iters, root=ROOT_RANK if spec.name in ROOTED_COLLECTIVES else -1,
                        measured=measured)


def run_rank(config: SweepConfig, *, rank: int, world_size: int, local_rank: int, local_world_size: int,
             init_method: str | None = None, launcher: str = "env",
             on_meta: Callable[[dict], None] | None = None,
             on_record: Callable[[dict], None] | None = None,
             reporter: TableReporter | None = None) -> SweepResults:
    """Run the whole sweep as one rank of a process group, then destroy the group.

    Parameters
    ----------
    config : SweepConfig
        What to measure.
    rank, world_size, local_rank, local_world_size : int
        This rank, the number of ranks, and the same on this host (as torchrun sets them).
    init_method : str or None
        ``tcp://127.0.0.1:PORT`` from the local launcher, or None for ``env://``
        (torchrun's MASTER_ADDR/MASTER_PORT).
    launcher : str
        Recorded in the metadata: ``local``, ``torchrun`` or ``env``.
    on_meta, on_record : callable or None
        Called on rank 0 with the metadata record and each result record, in order.
    reporter : TableReporter or None
        On rank 0, prints the table as sizes finish (None: print nothing).

    Returns
    -------
    SweepResults
        The result records (identical on every rank), with ``.meta``.

    Raises
    ------
    GpucommError
        Bad backend/dtype combination, CUDA graphs asked for on gloo, a results file rank 0
        cannot write (said before the process group forms), a process group that cannot form
        within ``config.timeout_s``, or a size that does not fit in memory.
    """
    return run_rank_sweeps([config], rank=rank, world_size=world_size, local_rank=local_rank,
                           local_world_size=local_world_size, init_method=init_method, launcher=launcher,
                           on_meta=on_meta and (lambda index, meta: on_meta(meta)),
                           on_record=on_record and (lambda index, record: on_record(record)),
                           reporters=None if reporter is None else [reporter])[0]


def run_rank_sweeps(configs: list[SweepConfig], *, rank: int, world_size: int, local_rank: int, local_world_size: int,
                    init_method: str | None = None, launcher: str = "env",
                    on_meta: Callable[[int, dict], None] | None = None,
                    on_record: Callable[[int, dict], None] | None = None,
                    reporters: list[TableReporter] | None = None) -> list[SweepResults]:
    """Run several sweeps, one after the other, as one rank of one process group (formed once).

    Parameters
    ----------
    configs : list of SweepConfig
        The sweeps, in order; they must resolve to one backend (one process group serves them all).
    rank, world_size, local_rank, local_world_size, init_method, launcher
        As :func:`run_rank`.
    on_meta, on_record : callable or None
        Called on rank 0 as ``on_meta(index, meta)`` and ``on_record(index, record)``, ``index`` the
        sweep's position in ``configs``.
    reporters : list of TableReporter or None
        On rank 0, one per sweep: prints that sweep's table as its sizes finish.

    Returns
    -------
    list of SweepResults
        One per sweep, in the order of ``configs``.

    Raises
    ------
    GpucommError
        As :func:`run_rank`, for any of the sweeps (checked before the group forms), or sweeps
        whose backends differ.
    """
    for config in configs:
        check_collective_ranks(config.collective, world_size)
    backend, notes = resolve_sweeps_backend(configs, local_world_size)
    for config in configs:
        if rank == 0 and config.out:
            check_results_path(config.out)
    device = rank_device(backend, local_rank, local_world_size)
    with process_group(backend, rank=rank, world_size=world_size, device=device,
                       timeout_s=max(config.timeout_s for config in configs), init_method=init_method):
        return [sweep_in_group(config, rank=rank, world_size=world_size, device=device, backend=backend, note=note,
                               launcher=launcher,
                               on_meta=on_meta and (lambda meta, i=index: on_meta(i, meta)),
                               on_record=on_record and (lambda record, i=index: on_record(i, record)),
                               reporter=reporters[index] if reporters else None)
                for index, (config, note) in enumerate(zip(configs, notes))]


def sweep_in_group(config: SweepConfig, *, rank: int, world_size: int, device: torch.device, backend: str,
                   note: str | None, launcher: str, on_meta: Callable[[dict], None] | None = None,
                   on_record: Callable[[dict], None] | None = None,
                   reporter: TableReporter | None = None) -> SweepResults:
    """One sweep in the process group already formed: metadata, then every size; rank 0 writes and reports.

    Parameters
    ----------
    config : SweepConfig
        What to measure.
    rank, world_size : int
        This rank and the number of ranks.
    device : torch.device
        This rank's device.
    backend, note : str
        The resolved backend and how it was chosen (recorded in the metadata).
    launcher : str
        Recorded in the metadata.
    on_meta, on_record, reporter
        As :func:`run_rank`.

    Returns
    -------
    SweepResults
        The result records with ``.meta``.
    """
    spec = get_spec(config.collective)
    writer = None
    results = SweepResults()
    try:
        meta = collect_metadata(config, backend=backend, device=device, world_size=world_size,
                                launcher=launcher, note=note)
        results.meta = meta
        if rank == 0:
            if config.out:
                writer = ResultsWriter(config.out)
                writer.write(meta)
            if on_meta:
                on_meta(meta)
            if reporter:
                reporter.start(meta, len(config.sizes(world_size)))
        for msg_bytes, count in config.sizes(world_size):
            record = measure_size(spec, config, msg_bytes=msg_bytes, count=count, device=device,
                                  rank=rank, world_size=world_size)
            results.append(record)
            if rank == 0:
                if writer:
                    writer.write(record)
                if on_record:
                    on_record(record)
                if reporter:
                    reporter.row(record)
        if rank == 0 and reporter:
            reporter.finish(results, out=config.out)
    finally:
        if writer:
            writer.close()
        if reporter:
            reporter.close()
    return results


def env_rank_info() -> dict | None:
    """``rank``, ``world_size``, ``local_rank``, ``local_world_size`` from torchrun's variables, or None."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return None
    try:
        world_size = int(os.environ["WORLD_SIZE"])
        return {
            "rank": int(os.environ["RANK"]),
            "world_size": world_size,
            "local_rank": int(os.environ.get("LOCAL_RANK", os.environ["RANK"])),
            "local_world_size": int(os.environ.get("LOCAL_WORLD_SIZE", world_size)),
        }
    except ValueError:
        raise GpucommError("RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE must be integers "
                           f"(RANK={os.environ.get('RANK')!r}, WORLD_SIZE={os.environ.get('WORLD_SIZE')!r})") from None


def is_torchrun() -> bool:
    """True when started by torchrun (torch elastic sets TORCHELASTIC_RUN_ID)."""
    return "TORCHELASTIC_RUN_ID" in os.environ


# resolve_backend and cuda_device_count live in the harness; they stay importable from here, where the
# bench command and the labs have always found them.
__all__ = ["run_rank", "measure_size", "measure_placement", "collect_metadata", "reduce_over_ranks", "iteration_stats",
           "capture_graph", "env_rank_info", "is_torchrun", "resolve_backend",
           "cuda_device_count"]
