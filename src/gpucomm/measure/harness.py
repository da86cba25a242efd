"""The timing harness shared by the collective sweep, copy bandwidth and the TP layer.

One place for what every measurement in :mod:`gpucomm.measure` does the same way:

* **backend and process group**: :func:`resolve_backend` (NCCL with one GPU per rank, else
  gloo on the CPU), :func:`rank_device`, :func:`process_group`;
* **timing**: :func:`time_block_s` times a block of back-to-back calls (host clock after a
  device synchronize, or CUDA events on the stream the work is queued on);
  :func:`timed_blocks_s` runs untimed warm-up calls, then timed blocks, interleaving the
  blocks of several functions, and keeps the median block (the maximum over ranks first
  when ranks take part);
* **the metadata record** (:func:`metadata_record`) that begins every results file: tool,
  gpucomm version, date, hosts, device names, backend, torch/CUDA/NCCL versions, the
  relevant environment variables and the command line.

The method follows nccl-tests (``src/common.cu``, v2.19.6): warm-up iterations, a barrier,
then a block of ``iters`` operations timed with the host clock and ended by a stream
synchronize, time per operation = block time / iters. nccl-tests averages the time over ranks
(``-a 1``); here the maximum is kept, the conservative choice: the slowest rank sets the pace
of a collective. nccl-tests runs one block; ``blocks > 1`` with the median block is an
addition for noisy shared machines.

Importing this module does not import torch (so that copy bandwidth can declare its command
and the TP layer its model helpers without it): each function that needs torch imports it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import inspect
import os
import platform
import socket
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import gpucomm
from gpucomm import GpucommError
from gpucomm.measure.config import check_backend_collective, check_backend_dtype
from gpucomm.measure.results import SCHEMA_VERSION

if TYPE_CHECKING:  # annotations only: torch is imported where it is used
    import torch

#: Environment variables copied into the metadata record (by prefix or exact name).
ENV_PREFIXES = ("NCCL_", "GLOO_", "TORCH_NCCL_")
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT")

#: The clocks :func:`time_block_s` can time a block with.
CLOCKS = ("host", "cuda_events")


# --- backend and process group ----------------------------------------------------------------

def cuda_device_count() -> int:
    """Visible CUDA GPUs usable by NCCL (0 without CUDA or without an NCCL build)."""
    import torch
    import torch.distributed as dist

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



def resolve_sweeps_backend(configs, num_ranks: int) -> tuple[str, list[str | None]]:
    """The one backend every sweep of ``configs`` runs on, checked before any process group forms.

    Parameters
    ----------
    configs : sequence of SweepConfig
        Sweeps for one process group (its ranks run them one after the other).
    num_ranks : int
        Ranks on this host (:func:`resolve_backend`'s ``local_world_size``).

    Returns
    -------
    (str, list of str or None)
        The backend, and each sweep's note on how it was chosen.

    Raises
    ------
    GpucommError
        A sweep that cannot run on ``num_ranks`` ranks (its collective, dtype or CUDA graphs), or sweeps whose
        backends differ: one process group serves every sweep.
    """
    from gpucomm.measure.config import check_backend_graphs, check_collective_ranks

    resolved = []
    for config in configs:
        check_collective_ranks(config.collective, num_ranks)
        backend, note = resolve_backend(config.backend, num_ranks, config.dtype, config.collective)
        check_backend_graphs(backend, config.graph_launches)
        resolved.append((backend, note))
    backends = {backend for backend, _ in resolved}
    if len(backends) != 1:
        raise GpucommError(f"sweeps on backends {', '.join(sorted(backends))} in one run: expected one backend, "
                           "since one process group serves every sweep")
    return backends.pop(), [note for _, note in resolved]

def rank_device(backend: str, local_rank: int, local_world_size: int) -> torch.device:
    """The device of this rank: its own GPU on NCCL (made current), else the CPU.

    On gloo without ``OMP_NUM_THREADS`` the host's cores are split between the local ranks,
    so that their compute (the TP layer, the correctness pass) does not oversubscribe them.
    """
    import torch

    if backend == "nccl":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        return device
    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(1, local_world_size)))
    return torch.device("cpu")


@contextlib.contextmanager
def process_group(backend: str, *, rank: int, world_size: int, device: torch.device, timeout_s: float,
                  init_method: str | None = None) -> Iterator[None]:
    """Form the default process group for the ``with`` block; destroy it on the way out.

    Parameters
    ----------
    backend : str
        ``nccl`` or ``gloo``.
    rank, world_size : int
        This rank and the number of ranks.
    device : torch.device
        This rank's device (:func:`rank_device`); NCCL groups are bound to it.
    timeout_s : float
        Seconds to wait for every peer, and for any collective later.
    init_method : str or None
        ``tcp://127.0.0.1:PORT`` from the local launcher, or None for ``env://`` (torchrun's
        MASTER_ADDR/MASTER_PORT).

    Raises
    ------
    GpucommError
        The group did not form within ``timeout_s`` (a peer that never came, a port taken),
        with the first line of torch's message.
    """
    import torch.distributed as dist

    kwargs = {"backend": backend, "rank": rank, "world_size": world_size,
              "timeout": _dt.timedelta(seconds=timeout_s)}
    if init_method is not None:
        kwargs["init_method"] = init_method
    if backend == "nccl" and "device_id" in inspect.signature(dist.init_process_group).parameters:
        kwargs["device_id"] = device  # torch >= 2.3: binds the group to this rank's GPU (eager NCCL init)
    try:
        dist.init_process_group(**kwargs)
    except Exception as exc:  # a peer that never came, a port taken, a store timeout
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise GpucommError(f"process group ({backend}, {world_size} ranks) did not form within "
                           f"{timeout_s:g} s: {first}") from exc
    try:
        yield
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def synchronize(device: torch.device) -> None:
    """Wait for the work queued on ``device`` (a no-op on the CPU, where calls return when done)."""
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def barrier(device: torch.device) -> None:
    """``dist.barrier``, told which GPU to use on NCCL (it would otherwise guess from the rank)."""
    import torch.distributed as dist

    if device.type == "cuda":
        dist.barrier(device_ids=[device.index])
    else:
        dist.barrier()


def max_over_ranks(value: float, device: torch.device) -> float:
    """The maximum of ``value`` over all ranks (float64 all_reduce MAX). Collective."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


# --- timing -----------------------------------------------------------------------------------



def time_block_s(fn: Callable[[], object], iters: int, *, device: torch.device, clock: str = "host",
                 across_ranks: bool = False, iteration_s: list[float] | None = None) -> float:
    """Seconds per call of one block of ``iters`` back-to-back calls of ``fn`` on this rank.

    Parameters
    ----------
    fn : callable
        One operation (a collective call, a copy, a layer), no arguments.
    iters : int
        Calls in the block (>= 1).
    device : torch.device
        Where the work runs: synchronized before and after a host-clock block; for CUDA
        events, the GPU whose current stream the calls queue their work on.
    clock : str
        ``host``: ``time.perf_counter`` around the block, after synchronizing ``device``
        (nccl-tests' method). ``cuda_events``: events recorded on ``device``'s current
        stream around the block (no host overhead between calls; ``device`` must be a GPU).
    across_ranks : bool
        Start with a barrier, so that every rank begins the block together (collective:
        every rank must call it with the same ``iters``).
    iteration_s : list of float or None
        If given, the time of each call of the block is appended to it, in seconds, without
        adding a synchronization: on a GPU from CUDA events recorded on the current stream
        between consecutive calls (``iters + 1`` events, each call's end is the next one's
        start, as nccl-tests ``-I 1`` records them in ``src/common.cu``; recording an event
        costs the host about a microsecond, not a wait), on the CPU from the host clock read
        between calls (each call returns when its work is done there).

    Returns
    -------
    float
        Block time / ``iters``, seconds.
    """
    if clock not in CLOCKS:
        raise GpucommError(f"clock {clock!r} is not valid: expected one of {', '.join(CLOCKS)}")
    if across_ranks:
        barrier(device)
    if clock == "cuda_events" or (iteration_s is not None and device.type == "cuda"):
        import torch

        with torch.cuda.device(device):
            # One event between consecutive calls (only the two ends without per-call times).
            events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1 if iteration_s is not None else 2)]
            every_call = len(events) > 2
            if clock == "host":
                synchronize(device)
                start_s = time.perf_counter()
            events[0].record()
            for i in range(iters):
                fn()
                if every_call:
                    events[i + 1].record()
            if not every_call:
                events[-1].record()
            if clock == "host":
                synchronize(device)
                block_s = time.perf_counter() - start_s
            else:
                events[-1].synchronize()
                block_s = events[0].elapsed_time(events[-1]) / 1e3  # elapsed_time is in ms
            if iteration_s is not None:
                iteration_s.extend(events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(iters))
            return block_s / iters
    synchronize(device)
    start_s = time.perf_counter()
    marks = [start_s] if iteration_s is not None else None
    for _ in range(iters):
        fn()
        if marks is not None:
            marks.append(time.perf_counter())
    synchronize(device)
    block_s = time.perf_counter() - start_s
    if marks is not None:
        iteration_s.extend(b - a for a, b in zip(marks, marks[1:]))
    return block_s / iters


def timed_blocks_s(fns: Mapping[str, Callable[[], object]], *, iters: int, warmup_iters: int, blocks: int,
                   device: torch.device, clock: str = "host", across_ranks: bool = False) -> dict[str, float]:
    """Warm up, then time ``blocks`` blocks of each function; the median block's time per call.

    Parameters
    ----------
    fns : mapping of str to callable
        The functions to time, by name.
    iters : int
        Calls per timed block (>= 1).
    warmup_iters : int
        Untimed calls of each function first (>= 0).
    blocks : int
        Timed blocks per function (>= 1). Blocks are interleaved (block 1 of every function,
        then block 2...), so that a change of load on a shared machine affects them alike.
    device, clock, across_ranks
        As :func:`time_block_s`. With ``across_ranks`` each block's time is the maximum over
        ranks (collective: every rank must call it with the same arguments).

    Returns
    -------
    dict of str to float
        Seconds per call of each function: the median over blocks (of the slowest rank's).
    """
    for fn in fns.values():
        if warmup_iters:
            # A block whose time is dropped: the warm-up runs where the timed blocks will (the
            # same device and stream for CUDA events) and has finished before they start.
            time_block_s(fn, warmup_iters, device=device, clock=clock)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(blocks):
        for name, fn in fns.items():
            block_s = time_block_s(fn, iters, device=device, clock=clock, across_ranks=across_ranks)
            times[name].append(max_over_ranks(block_s, device) if across_ranks else block_s)
    return {name: statistics.median(values) for name, values in times.items()}


# --- names and the metadata record --------------------------------------------------------------

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


def device_name(device: torch.device | int, *, threads_label: str = "thread") -> str:
    """``"cuda:0 NVIDIA H100 80GB HBM3"``, or ``"cpu <model> (N threads)"`` with torch's thread count.

    Parameters
    ----------
    device : torch.device or int
        A device; an int is that CUDA GPU.
    threads_label : str
        What the CPU's count counts (``"thread"``, ``"torch thread"``), made plural unless 1.
    """
    import torch

    if isinstance(device, int):
        device = torch.device("cuda", device)
    if device.type == "cuda":
        return f"cuda:{device.index} {torch.cuda.get_device_name(device)}"
    threads = torch.get_num_threads()
    return f"cpu {cpu_model_name()} ({threads} {threads_label}{'s' if threads != 1 else ''})"


def gather_rank_names(device: torch.device, world_size: int) -> tuple[list[str], list[str]]:
    """Every rank's host name and device name, in rank order. Collective."""
    import torch.distributed as dist

    gathered: list = [None] * world_size
    dist.all_gather_object(gathered, (socket.gethostname(), device_name(device)))
    return [h for h, _ in gathered], [d for _, d in gathered]


def nccl_version() -> str:
    """NCCL's version as "2.21.5" (torch returns a tuple; very old releases returned an int)."""
    import torch

    version = torch.cuda.nccl.version()
    return ".".join(str(v) for v in version) if isinstance(version, tuple) else str(version)


def call_argv(function: str, **params) -> tuple[str, ...]:
    """A Python call as the metadata's ``argv``: ``("run_sweep", "num_ranks=2", ...)``.

    A command records its command line; a function called from a notebook records this.

    Examples
    --------
    >>> call_argv("run_tp_layer", num_ranks=2, overlap=True)
    ('run_tp_layer', 'num_ranks=2', 'overlap=True')
    """
    return (function,) + tuple(f"{name}={value!r}" for name, value in params.items())


def metadata_record(tool: str, *, devices: Sequence[str], rank_hosts: Sequence[str] | None = None,
                    argv: Sequence[str] = (), **fields) -> dict:
    """The metadata record that begins a results file (``"record": "meta"``).

    Parameters
    ----------
    tool : str
        What wrote the file: ``gpucomm.bench`` (a collective sweep), ``gpucomm.bench.copy``,
        ``gpucomm.bench.tp_layer``.
    devices : sequence of str
        Device names (:func:`device_name`): one per rank, or the devices a single process used.
    rank_hosts : sequence of str or None
        Each rank's host name (:func:`gather_rank_names`); None for a single process.
    argv : sequence of str
        The command line, or :func:`call_argv` for a function call.
    **fields
        What the tool measured and how, placed after ``devices`` in the record; with
        ``backend="nccl"`` among them, NCCL's version is recorded too.

    Returns
    -------
    dict
        ``record, schema, tool, gpucomm_version, date, host`` (and ``hosts, rank_hosts`` with
        ``rank_hosts``), ``devices``, the ``fields``, then ``torch_version, cuda_version,
        nccl_version, python_version, platform, env`` (the ``NCCL_*``, ``GLOO_*``,
        ``TORCH_NCCL_*`` variables and those of :data:`ENV_NAMES`) and ``argv``.
    """
    import torch

    host = socket.gethostname()
    meta = {"record": "meta", "schema": SCHEMA_VERSION, "tool": tool, "gpucomm_version": gpucomm.__version__,
            "date": _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds"), "host": host}
    if rank_hosts is not None:
        meta["hosts"] = sorted(set(rank_hosts))
        meta["rank_hosts"] = list(rank_hosts)
    meta["devices"] = list(devices)
    meta.update(fields)
    meta.update({
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "nccl_version": nccl_version() if fields.get("backend") == "nccl" else None,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES) or k in ENV_NAMES},
        "argv": list(argv),
    })
    return meta


__all__ = ["cuda_device_count", "resolve_backend", "rank_device", "process_group", "synchronize", "barrier",
           "max_over_ranks", "time_block_s", "timed_blocks_s", "cpu_model_name", "device_name",
           "gather_rank_names", "nccl_version", "call_argv", "metadata_record", "ENV_PREFIXES", "ENV_NAMES", "CLOCKS"]
