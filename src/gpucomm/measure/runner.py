"""One rank's sweep: process group, warm-up, timed blocks, the maximum over ranks, the check.

The method copies nccl-tests (``src/common.cu``, v2.19.6); the timing itself is the shared
harness (:mod:`gpucomm.measure.harness`, also used by copy bandwidth and the TP layer):

1. For each size, allocate zeroed buffers and run ``warmup_iters`` untimed operations.
2. Barrier, then time a block of ``iters`` back-to-back operations with the host clock
   (``time.perf_counter``); on GPUs the block ends with ``torch.cuda.synchronize`` (as
   nccl-tests ends its timer after a stream synchronize). Time per operation is block
   time / iters.
3. Reduce that time over ranks with MAX: the slowest rank sets the pace of a collective.
   (nccl-tests averages over ranks by default, ``-a 1``; MAX is the conservative choice and
   equals it when ranks are balanced.) With ``blocks > 1``, steps 2-3 repeat and the
   median block is reported (an opt-in addition for noisy CPUs; nccl-tests runs one block).
4. A separate correctness pass: fill the buffers with small integers whose reduction is
   exact, run the operation once, count elements not equal to the exact answer, and sum
   that count over ranks (``#wrong``).

Every rank computes the same records (times and counts are reduced over ranks); rank 0
prints them, writes them to the results file and hands them to a callback.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import torch
import torch.distributed as dist

from gpucomm import GpucommError
from gpucomm.measure.config import SweepConfig, check_collective_ranks
from gpucomm.measure.harness import (
    cuda_device_count,
    gather_rank_names,
    max_over_ranks,
    metadata_record,
    process_group,
    rank_device,
    resolve_backend,
    synchronize,
    time_block_s,
    timed_blocks_s,
)
from gpucomm.measure.results import ResultsWriter, SweepResults, TableReporter
from gpucomm.measure.spec import REDUCE_OPS, TORCH_DTYPES, CollectiveSpec, get_spec
from gpucomm.model.collectives import algbw_bytes_per_s
from gpucomm.model.units import format_size


def collect_metadata(config: SweepConfig, *, backend: str, device: torch.device, world_size: int,
                     launcher: str, note: str | None) -> dict:
    """The sweep's metadata record (``"tool": "gpucomm.bench"``). Collective: every rank must call it.

    Every rank's host and device are gathered; the fields are those of
    :func:`gpucomm.measure.harness.metadata_record`, with the sweep's parameters, the busbw
    factor and the timing method after ``devices``.
    """
    rank_hosts, devices = gather_rank_names(device, world_size)
    spec = get_spec(config.collective)
    return metadata_record(
        "gpucomm.bench", rank_hosts=rank_hosts, devices=devices, argv=config.argv,
        num_ranks=world_size, backend=backend, backend_note=note, launcher=launcher,
        collective=config.collective, dtype=config.dtype, op=config.op_name, min_bytes=config.min_bytes,
        max_bytes=config.max_bytes, step_factor=config.step_factor, iters=config.iters, blocks=config.blocks,
        warmup_iters=config.warmup_iters, check=config.check, max_seconds_per_size=config.max_seconds_per_size,
        busbw_factor=spec.busbw_factor(world_size),
        timing=("host clock per block of iters (after cuda synchronize on GPU) / iters, max over ranks, "
                "median over blocks"),
        timing_note=spec.timing_note or None)


def measure_size(spec: CollectiveSpec, config: SweepConfig, *, msg_bytes: int, count: int, device: torch.device,
                 rank: int, world_size: int) -> dict:
    """Warm up, time and check one message size; returns the result record (same on all ranks).

    Collective: every rank must call it with the same arguments.
    """
    op = REDUCE_OPS[config.op]
    try:
        buffers = spec.alloc(count, TORCH_DTYPES[config.dtype], device, world_size)
    except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:  # CUDA OOM, or the CPU allocator's RuntimeError
        if not isinstance(exc, torch.cuda.OutOfMemoryError) and "allocate" not in str(exc):
            raise
        raise GpucommError(f"size {msg_bytes} B ({format_size(msg_bytes)}) does not fit in {device.type} memory: "
                           "expected a smaller -e") from None

    def run() -> None:
        spec.run(buffers, op)

    iters = config.iters
    if config.warmup_iters or config.max_seconds_per_size:
        # The warm-up is timed as a block: its time sizes the timed blocks under --max-seconds-per-size.
        warm_s = time_block_s(run, max(1, config.warmup_iters), device=device, across_ranks=True)
        if config.max_seconds_per_size:
            # All ranks must run the same number of operations: agree on the slowest estimate.
            warm_s = max_over_ranks(warm_s, device)
            iters = max(1, min(config.iters, int(config.max_seconds_per_size / max(warm_s, 1e-9))))
    call_s = timed_blocks_s({"run": run}, iters=iters, warmup_iters=0, blocks=config.blocks, device=device,
                            across_ranks=True)["run"]
    time_s = call_s / spec.ops_per_run  # send_recv: a round trip is 2 one-way transfers
    num_wrong = None
    if config.check:
        spec.fill(buffers, rank, world_size, config.op)
        run()
        synchronize(device)
        wrong = torch.tensor([spec.count_wrong(buffers, rank, world_size, config.op)], dtype=torch.int64, device=device)
        dist.all_reduce(wrong, op=dist.ReduceOp.SUM)
        num_wrong = int(wrong.item())
    algbw = algbw_bytes_per_s(spec.msg_bytes(count, config.elem_bytes, world_size), time_s)
    return {
        "record": "result",
        "collective": spec.name,
        "msg_bytes": msg_bytes,
        "count": count,
        "dtype": config.dtype,
        "op": config.op_name,
        "num_ranks": world_size,
        "iters": iters,
        "blocks": config.blocks,
        "warmup_iters": config.warmup_iters,
        "time_s": time_s,
        "algbw_bytes_per_s": algbw,
        "busbw_bytes_per_s": algbw * spec.busbw_factor(world_size),
        "num_wrong": num_wrong,
    }


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
        Bad backend/dtype combination, a process group that cannot form within
        ``config.timeout_s``, or a size that does not fit in memory.
    """
    check_collective_ranks(config.collective, world_size)
    backend, note = resolve_backend(config.backend, local_world_size, config.dtype, config.collective)
    device = rank_device(backend, local_rank, local_world_size)
    spec = get_spec(config.collective)
    with process_group(backend, rank=rank, world_size=world_size, device=device, timeout_s=config.timeout_s,
                       init_method=init_method):
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
__all__ = ["run_rank", "measure_size", "collect_metadata", "env_rank_info", "is_torchrun", "resolve_backend",
           "cuda_device_count"]
