"""Start N local ranks and collect their results: :func:`run_sweep` and ``gpucomm bench --ranks N``.

The launcher (:func:`launch_workers`, also used by :mod:`gpucomm.measure.tp_layer`) picks one
free TCP port on 127.0.0.1, spawns one process per rank (``multiprocessing`` spawn start
method, which works from notebooks because the worker lives in this package), and waits.
Rank 0 writes the results file itself and sends each record back over a queue; the
launcher prints the table. If a rank fails, the others are stopped at once and the first
rank's one-line error is raised as :class:`GpucommError`. On Ctrl-C or any exception in
the launcher, every worker is terminated (then killed) before the exception propagates;
workers also exit on their own if the launcher disappears.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_mod
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import fields, replace

from gpucomm import GpucommError
from gpucomm.measure.config import (
    DEFAULT_TIME_OVER_RANKS,
    DEFAULT_TIMEOUT_S,
    SweepConfig,
)
from gpucomm.measure.harness import call_argv, resolve_sweeps_backend
from gpucomm.measure.resources import available_device_bytes, available_host_bytes, check_fits_memory, check_local_ranks
from gpucomm.measure.results import SweepResults, TableReporter, check_results_path
from gpucomm.model.collectives import check_num_ranks
from gpucomm.model.units import MiB

#: Seconds a worker gets to exit after SIGTERM before SIGKILL.
STOP_GRACE_S = 5.0


class Terminated(Exception):
    """The launcher received SIGTERM (raised by the CLI's handler, so that workers are stopped)."""


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now (the kernel picks it: bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exit_with_parent(parent_pid: int) -> None:
    """Exit this worker if the launcher dies (even by SIGKILL): no orphans left in collectives."""
    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            time.sleep(0.5)

    threading.Thread(target=watch, name="gpucomm-parent-watch", daemon=True).start()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    if isinstance(exc, GpucommError):
        return first
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _worker(rank: int, world_size: int, port: int, send, configs: list[SweepConfig],
            env: dict[str, str] | None = None) -> None:
    """One rank of one or more sweeps under :func:`launch_workers` (module-level so that spawn can import it)."""
    # Before torch is imported and the process group (and NCCL, which reads NCCL_* once) starts.
    os.environ.update(env or {})
    from gpucomm.measure.runner import run_rank_sweeps  # torch is imported here, in the worker

    run_rank_sweeps(configs, rank=rank, world_size=world_size, local_rank=rank, local_world_size=world_size,
                    init_method=f"tcp://127.0.0.1:{port}", launcher="local",
                    on_meta=lambda index, meta: send("meta", (index, meta)),
                    on_record=lambda index, record: send("record", (index, record)))


def _rank_main(target, rank: int, num_ranks: int, port: int, messages, parent_pid: int, args: tuple) -> None:
    """The process of one rank under :func:`launch_workers`: run ``target``, report how it ended."""
    _exit_with_parent(parent_pid)
    # Ctrl-C at a terminal reaches the whole process group: let the launcher handle it
    # and stop the workers, instead of N tracebacks from ranks interrupted mid-collective.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        payload = target(rank, num_ranks, port, lambda kind, value: messages.put((kind, rank, value)), *args)
    except BaseException as exc:  # report, then exit non-zero
        if not isinstance(exc, GpucommError):
            traceback.print_exc(file=sys.stderr)
        _exit_now(messages, ("error", rank, _one_line(exc)), 1)
    _exit_now(messages, ("done", rank, payload), 0)


def _exit_now(messages, message: tuple, code: int) -> None:
    """Send the last message, flush, and leave without interpreter teardown.

    The results file is already closed and synced and the process group destroyed; what is
    left is Python's finalisation of torch, about a second per process for nothing.
    """
    messages.put(message)
    messages.close()
    messages.join_thread()  # the message is in the pipe before the process ends
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _stop(procs: list) -> None:
    """Terminate (SIGTERM), then kill (SIGKILL) any worker still alive, and reap all."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def launch_workers(target, num_ranks: int, args: tuple = (), *, on_message=None, name: str = "gpucomm-rank",
                   describe_progress=None, poll_s: float = 0.1) -> list:
    """Run ``target`` in one spawned process per local rank; return each rank's result.

    The ranks meet on one free TCP port on 127.0.0.1. A worker that dies with the launcher
    (even by SIGKILL) takes its rank down too; Ctrl-C is left to the launcher.

    Parameters
    ----------
    target : callable
        Module-level function (spawn imports it) called in each rank's process as
        ``target(rank, num_ranks, port, send, *args)``; ``send(kind, payload)`` passes a
        message to ``on_message`` in the launcher (``kind`` neither ``"error"`` nor ``"done"``).
        What it returns (picklable) is that rank's result; what it raises is reported in one
        line and fails the run.
    num_ranks : int
        Processes to start, one per rank (>= 1).
    args : tuple
        Further arguments for ``target`` (picklable).
    on_message : callable or None
        ``on_message(kind, rank, payload)`` for every ``send``, in the launcher, in the order
        each rank sent them.
    name : str
        Process name prefix; rank ``r``'s process is ``f"{name}{r}"``.
    describe_progress : callable or None
        Returns what the run had done so far (``"after 3 of 18 sizes"``), appended to the
        error for a rank that exited without a message.
    poll_s : float
        How often to check the workers while waiting, in seconds.

    Returns
    -------
    list
        ``target``'s return value, by rank.

    Raises
    ------
    GpucommError
        A rank that failed: ``"rank R: its one-line message"`` (plus how many more ranks
        failed), or ``"rank R exited with code C without an error message"``.
    KeyboardInterrupt, Terminated
        Or any exception in the launcher, after stopping every worker (SIGTERM, then
        SIGKILL after ``STOP_GRACE_S``).
    """
    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_rank_main, args=(target, rank, num_ranks, port, messages, os.getpid(), tuple(args)),
                         name=f"{name}{rank}", daemon=True) for rank in range(num_ranks)]
    errors: list[tuple[int, str]] = []
    done: dict[int, object] = {}  # rank -> its result

    def handle(message) -> None:
        kind, rank, payload = message
        if kind == "error":
            errors.append((rank, payload))
        elif kind == "done":
            done[rank] = payload
        elif on_message:
            on_message(kind, rank, payload)

    def drain(wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                handle(messages.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue_mod.Empty:
                return

    try:
        for p in procs:
            p.start()
        while len(done) < num_ranks:
            try:
                handle(messages.get(timeout=poll_s))
                continue
            except queue_mod.Empty:
                pass
            # A rank that failed, or ranks that all exited: collect the messages already on their way.
            if errors or any(p.exitcode not in (None, 0) for p in procs) or all(p.exitcode == 0 for p in procs):
                drain(1.0)
                break
        if len(done) == num_ranks:  # all ranks reported success: let them finish exiting
            deadline = time.monotonic() + STOP_GRACE_S
            for p in procs:
                p.join(max(0.0, deadline - time.monotonic()))
    finally:
        # which ranks had died on their own, before _stop terminates the rest: those are the ones to blame
        exit_codes = [p.exitcode for p in procs]
        _stop(procs)
        messages.cancel_join_thread()
        messages.close()
    if errors:
        rank, text = errors[0]
        others = len(errors) - 1
        more = f" (and {others} more rank{'s' if others > 1 else ''} failed)" if others else ""
        raise GpucommError(f"rank {rank}: {text}{more}")
    if len(done) < num_ranks:
        missing = [rank for rank in range(num_ranks) if rank not in done]
        died = [rank for rank in missing if exit_codes[rank] not in (None, 0)]
        rank = (died or missing)[0]
        code = exit_codes[rank] if exit_codes[rank] is not None else procs[rank].exitcode
        progress = f" {describe_progress()}" if describe_progress else ""
        raise GpucommError(f"rank {rank} {_exit_text(code)} without an error message{progress}")
    return [done[rank] for rank in range(num_ranks)]


def launch_local(config: SweepConfig, num_ranks: int, *, reporter: TableReporter | None = None,
                 poll_s: float = 0.1, env: dict[str, str] | None = None) -> SweepResults:
    """Run ``config`` on ``num_ranks`` local ranks; return rank 0's records.

    Parameters
    ----------
    config : SweepConfig
        What to measure (validated).
    num_ranks : int
        Processes to start, one per rank (>= 1); on NCCL one per GPU.
    reporter : TableReporter or None
        Prints the table as records arrive (None: silent).
    poll_s : float
        How often to check the workers while waiting, in seconds.
    env : dict of str to str, optional
        Environment variables set in every rank's process before torch starts (for
        example ``{"NCCL_ALGO": "Ring"}``); the launcher's own environment is unchanged.

    Returns
    -------
    SweepResults
        One record per finished size, metadata in ``.meta``.

    Raises
    ------
    GpucommError
        Bad ranks/backend/dtype, CUDA graphs on gloo or a results file that cannot be
        written (before anything starts), or a rank that failed (its message, with its rank).
    KeyboardInterrupt, Terminated
        After stopping every worker; records already written to ``config.out`` stay there.
    """
    return launch_local_sweeps([config], num_ranks, reporters=None if reporter is None else [reporter], poll_s=poll_s,
                               env=env)[0]


def launch_local_sweeps(configs: list[SweepConfig], num_ranks: int, *, reporters: list[TableReporter] | None = None,
                        poll_s: float = 0.1, env: dict[str, str] | None = None) -> list[SweepResults]:
    """Run several sweeps on ``num_ranks`` local ranks started once (one process group for all).

    Parameters
    ----------
    configs : list of SweepConfig
        The sweeps, in order (validated); they must resolve to one backend.
    num_ranks : int
        Processes to start, one per rank (>= 1); on NCCL one per GPU.
    reporters : list of TableReporter or None
        One per sweep: prints its table as its records arrive (None: silent).
    poll_s, env
        As :func:`launch_local`.

    Returns
    -------
    list of SweepResults
        One per sweep, in the order of ``configs``.

    Raises
    ------
    GpucommError, KeyboardInterrupt, Terminated
        As :func:`launch_local`, for any of the sweeps; sweeps on different backends are refused
        before anything starts.
    """
    if not configs:
        raise GpucommError("no sweep to run: expected at least one collective")
    check_num_ranks(num_ranks, maximum=4096)
    env = _check_env(env)
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if isinstance(main_file, str) and main_file.startswith("<"):
        # spawn re-runs the main module in every rank: a program read from stdin cannot be re-run
        raise GpucommError(f"cannot start ranks from a program read from {main_file}: expected a script file, "
                           "a notebook, or `gpucomm bench --ranks N`")
    backend, _ = resolve_sweeps_backend(configs, num_ranks)  # every check before any process starts
    for config in configs:
        if config.out:
            check_results_path(config.out)
        _check_resources(config, num_ranks, backend)
    results = [SweepResults() for _ in configs]
    totals = [len(config.sizes(num_ranks)) for config in configs]

    def on_message(kind: str, rank: int, payload) -> None:
        index, value = payload
        reporter = reporters[index] if reporters else None
        if kind == "meta":
            results[index].meta = value
            if reporter:
                reporter.start(value, totals[index])
        elif kind == "record":
            results[index].append(value)
            if reporter:
                reporter.row(value)
                if len(results[index]) == totals[index]:
                    reporter.close()
                    reporter.finish(results[index], out=configs[index].out)

    def progress() -> str:
        done = sum(len(r) for r in results)
        return f"after {done} of {sum(totals)} sizes" if len(configs) > 1 else f"after {done} of {totals[0]} sizes"

    try:
        launch_workers(_worker, num_ranks, (list(configs), env), on_message=on_message, name="gpucomm-bench-rank",
                       describe_progress=progress, poll_s=poll_s)
    finally:
        for reporter, result, total in zip(reporters or [], results, totals):
            if len(result) < total:  # cut short: close its progress bar; a finished one closed itself
                reporter.close()
    return results


def _check_resources(config: SweepConfig, num_ranks: int, backend: str) -> None:
    """Ranks and the largest buffers must fit this machine (checked before any process starts)."""
    check_local_ranks(num_ranks, backend)
    largest = max(size for size, _ in config.sizes(num_ranks))
    copies = 3  # send buffer, receive buffer, and the expected values of the correctness pass
    if backend == "gloo":  # every rank lives in this host's memory
        check_fits_memory(copies * largest * num_ranks, where="host memory", available_bytes=available_host_bytes(),
                          flag="-e", max_bytes=largest, copies=copies * num_ranks)
    else:  # one rank per GPU; device 0 stands for all
        check_fits_memory(copies * largest, where="GPU 0", available_bytes=available_device_bytes(0), flag="-e",
                          max_bytes=largest, copies=copies)


def _check_env(env) -> dict[str, str]:
    """``env`` as a dict of str to str (None: empty), or a clear error."""
    if env is None:
        return {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and k and "=" not in k and isinstance(v, str)
                                            for k, v in env.items()):
        raise GpucommError(f"env {env!r} is not valid: expected a dict of variable names to string values, "
                           "e.g. {'NCCL_ALGO': 'Ring'}")
    return dict(env)


def run_sweep(num_ranks: int = 2, collective: str = "all_reduce", *, min_bytes: int | str = 8,
              max_bytes: int | str = 64 * MiB, step_factor: int = 2, iters: int = 20, blocks: int = 1, warmup_iters: int = 5,
              check: bool = True, dtype: str = "float32", op: str = "sum", backend: str = "auto",
              out: str | os.PathLike | None = None, max_seconds_per_size: float | None = None,
              timeout_s: float = DEFAULT_TIMEOUT_S, print_table: bool = True,
              progress: bool | None = None, env: dict[str, str] | None = None, step_bytes: int | str | None = None,
              time_over_ranks: str = DEFAULT_TIME_OVER_RANKS, graph_launches: int = 0) -> SweepResults:
    """Measure a collective over a range of message sizes on ``num_ranks`` local ranks.

    For notebooks and scripts: the ranks are separate processes started here (one per
    GPU with NCCL, else on the CPU with gloo), and the table is printed as sizes finish.

    Parameters
    ----------
    num_ranks : int
        Ranks to start (>= 1).
    collective : str
        One of ``config.BENCH_COLLECTIVES``: ``all_reduce`` (default), ``all_gather``,
        ``reduce_scatter`` (not on gloo), ``broadcast``, ``all_to_all``, ``send_recv``
        (a ring: every rank sends to the next and receives from the previous, as nccl-tests).
    min_bytes, max_bytes : int or str
        Size range in bytes, or strings such as ``"64MiB"`` (nccl-tests ``-b``/``-e``):
        per rank, or the total buffer for all_gather, reduce_scatter and all_to_all.
    step_factor : int
        Integer factor between sizes, >= 2 (``-f``); 0 or 1 adds ``step_bytes`` instead.
    iters, warmup_iters : int
        Timed iterations per block and warm-up iterations per size (``-n``, ``-w``).
    blocks : int
        Timed blocks per size; the median block's time is reported (1: nccl-tests' method).
    check : bool
        Count wrong elements in a separate pass with exact inputs (``-c``).
    dtype : str
        ``float32`` (default) or ``float64``; ``float16``/``bfloat16`` need NCCL.
    op : str
        ``sum``, ``prod``, ``max`` or ``min`` (collectives that do not reduce record ``none``).
    backend : str
        ``auto``, ``nccl`` or ``gloo``.
    out : str or Path or None
        JSON-lines results file (metadata line, then one line per size, each synced to
        disk as the size finishes); None for no file.
    max_seconds_per_size : float or None
        Cap on one timed block's length; large sizes then run fewer iterations (>= 1).
    timeout_s : float
        Process-group timeout in seconds.
    print_table : bool
        Print the nccl-tests-like table to stdout as sizes finish.
    progress : bool or None
        Progress bar on stderr (None: only when stderr is a terminal).
    env : dict of str to str, optional
        Environment variables for the rank processes only, set before torch starts there:
        ``{"NCCL_ALGO": "Ring"}``, ``{"NCCL_P2P_DISABLE": "1"}``. NCCL reads them when its
        communicator starts; gloo ignores them. They are recorded in ``meta["env"]``.
    step_bytes : int or str or None
        Increment between sizes with ``step_factor`` 0 or 1 (nccl-tests ``-i``; None: 1 MiB).
    time_over_ranks : str
        ``rank0``, ``avg``, ``min`` or ``max`` (default): how the ranks' times of a block become
        one (nccl-tests ``-a`` 0 to 3).
    graph_launches : int
        0 (default), or N >= 1 launches of a CUDA graph of ``iters`` operations per timed block
        (nccl-tests ``-G``; NCCL on GPUs only).

    Returns
    -------
    SweepResults
        A list of per-size records (``msg_bytes``, ``count``, ``time_s``,
        ``algbw_bytes_per_s``, ``busbw_bytes_per_s``, ``num_wrong``, ``iter_p50_s``,
        ``iter_p99_s``, ``out_of_place``, ``in_place``, ...: :mod:`gpucomm.measure.results`)
        with the metadata record in ``.meta`` and the total of wrong elements in ``.num_wrong``.

    Raises
    ------
    GpucommError
        On bad input (including a collective the backend does not implement, such as
        reduce_scatter on gloo), or when a rank fails (with that rank's one-line message).

    Examples
    --------
    >>> results = run_sweep(num_ranks=2, max_bytes="1MiB", print_table=False)  # doctest: +SKIP
    >>> results.num_wrong, len(results)  # doctest: +SKIP
    (0, 18)
    """
    config = _called_config("run_sweep", num_ranks, collective=collective, min_bytes=min_bytes, max_bytes=max_bytes,
                            step_factor=step_factor, iters=iters, blocks=blocks, warmup_iters=warmup_iters, check=check,
                            dtype=dtype, op=op, backend=backend, out=None if out is None else os.fspath(out),
                            max_seconds_per_size=max_seconds_per_size, timeout_s=timeout_s, step_bytes=step_bytes,
                            time_over_ranks=time_over_ranks, graph_launches=graph_launches)
    reporter = TableReporter(progress=progress) if print_table else None
    return launch_local(config, num_ranks, reporter=reporter, env=env)


def _called_config(function: str, num_ranks: int, **fields_) -> SweepConfig:
    """A validated :class:`SweepConfig` whose metadata ``argv`` records the call, as the CLI records its command line."""
    config = SweepConfig(**fields_)
    return replace(config, argv=call_argv(function, num_ranks=num_ranks, **{
        f.name: getattr(config, f.name) for f in fields(config) if f.name != "argv"}))


def run_sweeps(num_ranks: int = 2, collectives: Sequence[str] = ("all_reduce", "all_gather", "broadcast", "all_to_all"),
               *, out_dir: str | os.PathLike | None = None, print_table: bool = True, progress: bool | None = None,
               env: dict[str, str] | None = None, **sweep) -> dict[str, SweepResults]:
    """Measure several collectives on ``num_ranks`` local ranks started once: one process group for every sweep.

    The same measurement as one :func:`run_sweep` per collective, without starting the ranks and
    forming the process group again for each (seconds per collective on a CPU machine).

    Parameters
    ----------
    num_ranks : int
        Ranks to start (>= 1).
    collectives : sequence of str
        The collectives, measured in this order (each as :func:`run_sweep`'s ``collective``; each at
        most once); they must all run on one backend (gloo has no reduce_scatter).
    out_dir : str or Path or None
        An existing folder: each sweep writes ``<collective>.jsonl`` there; None for no files.
    print_table, progress, env
        As :func:`run_sweep`; one table per collective.
    **sweep
        Every other keyword of :func:`run_sweep` (``min_bytes``, ``max_bytes``, ``step_factor``, ``iters``, ...),
        the same for every collective.

    Returns
    -------
    dict of str to SweepResults
        Each collective's records, in the order of ``collectives``.

    Raises
    ------
    GpucommError
        As :func:`run_sweep`, for any of the collectives (all checked before any rank starts), a
        collective named twice, or collectives that need different backends.

    Examples
    --------
    >>> sweeps = run_sweeps(2, ["all_reduce", "all_gather"], max_bytes="1MiB", print_table=False)  # doctest: +SKIP
    >>> {c: len(r) for c, r in sweeps.items()}  # doctest: +SKIP
    {'all_reduce': 18, 'all_gather': 18}
    """
    names = list(collectives)
    if len(set(names)) != len(names):
        raise GpucommError(f"collectives {', '.join(names)}: expected each at most once")
    if "out" in sweep:
        raise GpucommError("run_sweeps writes one file per collective: expected out_dir=FOLDER, not out=")
    configs = [_called_config("run_sweeps", num_ranks, collective=name,
                              out=None if out_dir is None else os.path.join(os.fspath(out_dir), f"{name}.jsonl"), **sweep)
               for name in names]
    reporters = [TableReporter(progress=progress) for _ in configs] if print_table else None
    return dict(zip(names, launch_local_sweeps(configs, num_ranks, reporters=reporters, env=env)))

