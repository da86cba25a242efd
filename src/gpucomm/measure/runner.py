"""One rank's sweep: process group, warm-up, timed blocks, the maximum over ranks, the check.

The method copies nccl-tests (``src/common.cu``, v2.19.6):

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

import datetime as _dt
import inspect
import os
import platform
import socket
import statistics
import time
from typing import Callable

import torch
import torch.distributed as dist

import gpucomm
from gpucomm import GpucommError
from gpucomm.measure.config import SweepConfig, check_backend_collective, check_backend_dtype, check_collective_ranks
from gpucomm.measure.results import ResultsWriter, SweepResults, TableReporter
from gpucomm.measure.spec import REDUCE_OPS, TORCH_DTYPES, CollectiveSpec, get_spec
from gpucomm.model.collectives import algbw_bytes_per_s
from gpucomm.model.units import format_size

#: Environment variables copied into the results metadata (by prefix or exact name).
ENV_PREFIXES = ("NCCL_", "GLOO_", "TORCH_NCCL_")
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT")


def cuda_device_count() -> int:
    """Visible CUDA GPUs usable by NCCL (0 without CUDA or without an NCCL build)."""
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        return 0
    return torch.cuda.device_count()


def resolve_backend(requested: str, local_world_size: int, dtype: str,
                    collective: str = "all_reduce") -> tuple[str, str | None]:
    """Choose the process-group backend; never two NCCL ranks on one GPU.

    Parameters
    ----------
    requested : str
        ``auto``, ``nccl`` or ``gloo``.
    local_world_size : int
        Ranks on this host (each NCCL rank needs its own GPU).
    dtype : str
        Canonical dtype name (gloo refuses float16/bfloat16 here).
    collective : str
        The collective (gloo refuses the ones in ``config.UNSUPPORTED``, e.g. reduce_scatter).

    Returns
    -------
    backend : str
        ``nccl`` or ``gloo``.
    note : str or None
        A line explaining an automatic choice, for the output header.

    Raises
    ------
    GpucommError
        ``nccl`` asked for without CUDA/NCCL or with more ranks than GPUs; a dtype gloo
        cannot reduce or a collective gloo does not implement, on the gloo path.
    """
    gpus = cuda_device_count()
    if requested == "nccl":
        if gpus == 0:
            raise GpucommError("backend nccl needs CUDA GPUs and a torch build with NCCL, and none is available: "
                               "expected --backend gloo or auto on this machine")
        if local_world_size > gpus:
            raise GpucommError(
                f"backend nccl runs one rank per GPU, but {local_world_size} ranks were asked for on a host with {gpus} "
                f"visible GPUs: expected --ranks (or --nproc-per-node) from 1 to {gpus}, or --backend gloo")
        return "nccl", None
    if requested == "gloo":
        check_backend_dtype("gloo", dtype)
        check_backend_collective("gloo", collective)
        return "gloo", None
    if gpus >= local_world_size:
        return "nccl", f"backend auto: NCCL, one rank per GPU ({local_world_size} of {gpus} GPUs)"
    if gpus == 0:
        note = "backend auto: no CUDA GPU with NCCL here; using gloo on CPU"
    else:
        note = (f"backend auto: {local_world_size} ranks but only {gpus} GPUs, and NCCL needs one GPU per rank; "
                "using gloo on CPU instead")
    check_backend_dtype("gloo", dtype)
    check_backend_collective("gloo", collective)
    return "gloo", note


def cpu_model_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda:{device.index} {torch.cuda.get_device_name(device)}"
    threads = torch.get_num_threads()
    return f"cpu {cpu_model_name()} ({threads} thread{'s' if threads != 1 else ''})"


def _nccl_version() -> str:
    """NCCL's version as "2.21.5" (torch returns a tuple; very old releases returned an int)."""
    version = torch.cuda.nccl.version()
    return ".".join(str(v) for v in version) if isinstance(version, tuple) else str(version)


def collect_metadata(config: SweepConfig, *, backend: str, device: torch.device, world_size: int,
                     launcher: str, note: str | None) -> dict:
    """The metadata record. Collective: every rank must call it (it gathers hosts and devices)."""
    gathered: list = [None] * world_size
    dist.all_gather_object(gathered, (socket.gethostname(), _device_name(device)))
    spec = get_spec(config.collective)
    meta = {
        "record": "meta",
        "schema": 1,
        "tool": "gpucomm.bench",
        "gpucomm_version": gpucomm.__version__,
        "date": _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "hosts": sorted({h for h, _ in gathered}),
        "rank_hosts": [h for h, _ in gathered],
        "devices": [d for _, d in gathered],
        "num_ranks": world_size,
        "backend": backend,
        "backend_note": note,
        "launcher": launcher,
        "collective": config.collective,
        "dtype": config.dtype,
        "op": config.op_name,
        "min_bytes": config.min_bytes,
        "max_bytes": config.max_bytes,
        "step_factor": config.step_factor,
        "iters": config.iters,
        "blocks": config.blocks,
        "warmup_iters": config.warmup_iters,
        "check": config.check,
        "max_seconds_per_size": config.max_seconds_per_size,
        "busbw_factor": spec.busbw_factor(world_size),
        "timing": ("host clock per block of iters (after cuda synchronize on GPU) / iters, max over ranks, "
                   "median over blocks"),
        "timing_note": spec.timing_note or None,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "nccl_version": _nccl_version() if backend == "nccl" else None,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "env": {k: v for k, v in sorted(os.environ.items())
                if k.startswith(ENV_PREFIXES) or k in ENV_NAMES},
        "argv": list(config.argv),
    }
    return meta


def _make_sync(device: torch.device) -> Callable[[], None]:
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    return lambda: None  # gloo on CPU: dist.all_reduce returns when the operation is done


def barrier(device: torch.device) -> None:
    """``dist.barrier``, told which GPU to use on NCCL (it would otherwise guess from the rank)."""
    if device.type == "cuda":
        dist.barrier(device_ids=[device.index])
    else:
        dist.barrier()


def time_block_s(spec: CollectiveSpec, buffers, op, iters: int, sync: Callable[[], None],
                 device: torch.device) -> float:
    """Seconds per operation of one timed block on this rank (barrier first, host clock).

    Collective: every rank must call it with the same ``iters``.
    """
    barrier(device)
    sync()
    start = time.perf_counter()
    for _ in range(iters):
        spec.run(buffers, op)
    sync()
    return (time.perf_counter() - start) / iters


def max_over_ranks(value: float, device: torch.device) -> float:
    """The maximum of ``value`` over all ranks (float64 all_reduce MAX)."""
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def measure_size(spec: CollectiveSpec, config: SweepConfig, *, msg_bytes: int, count: int, device: torch.device,
                 rank: int, world_size: int) -> dict:
    """Warm up, time and check one message size; returns the result record (same on all ranks).

    Collective: every rank must call it with the same arguments.
    """
    sync = _make_sync(device)
    op = REDUCE_OPS[config.op]
    try:
        buffers = spec.alloc(count, TORCH_DTYPES[config.dtype], device, world_size)
    except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:  # CUDA OOM, or the CPU allocator's RuntimeError
        if not isinstance(exc, torch.cuda.OutOfMemoryError) and "allocate" not in str(exc):
            raise
        raise GpucommError(f"size {msg_bytes} B ({format_size(msg_bytes)}) does not fit in {device.type} memory: "
                           "expected a smaller -e") from None
    iters = config.iters
    if config.warmup_iters or config.max_seconds_per_size:
        warm_s = time_block_s(spec, buffers, op, max(1, config.warmup_iters), sync, device)
        if config.max_seconds_per_size:
            # All ranks must run the same number of operations: agree on the slowest estimate.
            warm_s = max_over_ranks(warm_s, device)
            iters = max(1, min(config.iters, int(config.max_seconds_per_size / max(warm_s, 1e-9))))
    block_times_s = [max_over_ranks(time_block_s(spec, buffers, op, iters, sync, device), device)
                     for _ in range(config.blocks)]
    time_s = statistics.median(block_times_s) / spec.ops_per_run  # send_recv: a round trip is 2 one-way transfers
    num_wrong = None
    if config.check:
        spec.fill(buffers, rank, world_size, config.op)
        spec.run(buffers, op)
        sync()
        wrong = torch.tensor([spec.count_wrong(buffers, rank, world_size, config.op)], dtype=torch.int64, device=device)
        dist.all_reduce(wrong, op=dist.ReduceOp.SUM)
        num_wrong = int(wrong.item())
    del buffers
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
    if backend == "nccl":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
        if "OMP_NUM_THREADS" not in os.environ:
            # Ranks share the host's cores: split them so fill/check kernels do not oversubscribe.
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(1, local_world_size)))
    spec = get_spec(config.collective)
    kwargs = {"backend": backend, "rank": rank, "world_size": world_size,
              "timeout": _dt.timedelta(seconds=config.timeout_s)}
    if init_method is not None:
        kwargs["init_method"] = init_method
    if backend == "nccl" and "device_id" in inspect.signature(dist.init_process_group).parameters:
        kwargs["device_id"] = device  # torch >= 2.3: binds the group to this rank's GPU (eager NCCL init)
    try:
        dist.init_process_group(**kwargs)
    except Exception as exc:  # a peer that never came, a port taken, a store timeout
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise GpucommError(f"process group ({backend}, {world_size} ranks) did not form within "
                           f"{config.timeout_s:g} s: {first}") from exc
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
        if dist.is_initialized():
            dist.destroy_process_group()
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


__all__ = ["resolve_backend", "run_rank", "measure_size", "time_block_s", "max_over_ranks",
           "collect_metadata", "env_rank_info", "is_torchrun", "cuda_device_count"]
