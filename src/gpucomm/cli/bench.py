"""``gpucomm bench``: measure a collective over message sizes, like nccl-tests.

Run as ``gpucomm bench``, ``python -m gpucomm bench`` or ``torchrun ... -m gpucomm bench``.
Importing this module does not import torch: :func:`register` only declares the arguments;
torch is loaded by :func:`run` when a sweep actually runs, and where it is missing ``run``
says so in one line.

Flags follow nccl-tests (``src/common.cu``, v2.19.6: ``-b -e -f -i -n -w -c -d -o -a -G -I``;
sizes accept ``8``, ``64MiB``, ``128M``), and so does the table: out-of-place and in-place
columns, then ``# Out of bounds values`` and ``# Avg bus bandwidth``. nccl-tests options that
have no counterpart here (``-t``, ``-g``, ``-C``, ``-m``...) are accepted at the value this
command always uses and refused otherwise, with what to use instead
(:data:`NCCL_TESTS_FIXED`). Under torchrun (``RANK``/``WORLD_SIZE`` set) each process is one
rank; otherwise ``--ranks N`` local ranks are started. Exit status: 0 when every checked
element is right, 1 when any is wrong, 2 on bad input (a results file that cannot be written
included, said before any rank starts), a failed rank or no torch, 130 on Ctrl-C, 143 on SIGTERM.

``--out`` follows the output-path rule of every verb (:mod:`gpucomm.measure.output_paths`),
checked before any rank starts: an existing file only with ``--force``, a folder that exists
(the default ``results/`` is created); a FIFO or ``/dev/stdout`` is written as it is. Each
finished size is synced to disk, so a crash, Ctrl-C or a full disk keeps the sizes before it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import signal
import sys
import threading

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg, print_error, require_torch
from gpucomm.measure.config import BENCH_COLLECTIVES, DEFAULT_TIMEOUT_S, DTYPE_BYTES, REDOPS, TIME_OVER_RANKS, SweepConfig
from gpucomm.measure.output_paths import check_output_file

__all__ = ["register", "run", "config_from_args", "NCCL_TESTS_FIXED"]

DESCRIPTION = """Measure a collective over message sizes, like nccl-tests: prints size, count, type,
redop, root, then time (us), algbw and busbw (GB/s = 1e9 B/s) and #wrong out-of-place and
in-place, and writes a JSON-lines results file (a metadata line, then one line per size as it
finishes, with per-iteration p50/p99)."""

#: nccl-tests options (``src/common.cu``, v2.19.6) with no counterpart here: flag -> (nccl-tests'
#: long name, the value this command always behaves as, or None for none, and what to do instead).
#: Given at that value they are accepted (a copied nccl-tests command line runs); otherwise refused.
NCCL_TESTS_FIXED = {
    "-t": ("--nthreads", "1", "each rank is its own process: expected --ranks N for N local ranks, "
                              "or torchrun --nproc-per-node N"),
    "-g": ("--ngpus", "1", "each rank drives one GPU: expected --ranks N (one process per GPU), "
                           "or torchrun --nproc-per-node N"),
    "-C": ("--report_cputime", "0", "the time column is each operation's time after a device synchronize; "
                                    "the host's launch time alone is not reported"),
    "-m": ("--agg_iters", "1", "each timed operation is one call; calls are not aggregated in a group"),
    "-N": ("--run_cycles", "1", "run the command again for another cycle"),
    "-p": ("--parallel_init", "0", "ranks are separate processes that start together"),
    "-r": ("--root", "0", "broadcast's root is rank 0"),
    "-z": ("--blocking", "0", "collectives are not followed by a barrier; expected --blocks to repeat timed blocks"),
    "-y": ("--stream_null", "0", "torch.distributed chooses the streams"),
    "-T": ("--timeout", "0", "expected --timeout-s S for the process-group timeout"),
    "-J": ("--output_file", None, "expected --out FILE: JSON lines, one record per size"),
    "-S": ("--report_timestamps", "0", "the results file's metadata has the date"),
    "-R": ("--local_register", "0", "torch.distributed registers no buffers here"),
    "-u": ("--unalign", "0", "buffers are torch's, aligned"),
    "-M": ("--memory", "0", "GPU memory use is not reported"),
    "-K": ("--per_iter_skip", "0", "per-iteration statistics use every timed iteration"),
}
EPILOG = """examples:
  gpucomm bench --ranks 2 -b 8 -e 64MiB -f 2
  gpucomm bench --ranks 2 -b 1MiB -e 8MiB -i 1MiB -I 1
  torchrun --nproc-per-node 8 -m gpucomm bench -b 8 -e 8G -f 2 --out results/ar.jsonl
  python -m gpucomm bench --ranks 2 --backend gloo -e 1MiB --no-out"""


def register(subparsers) -> None:
    """Add the ``bench`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`."""
    parser = subparsers.add_parser("bench", help="measure a collective like nccl-tests (torch.distributed)",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-b", "--min-bytes", default="8", metavar="SIZE",
                        help="smallest message size per rank (all_gather, reduce_scatter, all_to_all: the total buffer, "
                             "as nccl-tests): bytes or with a unit, e.g. 8, 1KiB, 128M (default 8)")
    parser.add_argument("-e", "--max-bytes", default="64MiB", metavar="SIZE",
                        help="largest message size per rank (default 64MiB)")
    parser.add_argument("-f", "--step-factor", type=int_arg("step factor -f", 0), default=None, metavar="INT",
                        help="integer factor between sizes (default 2; 0 or 1: add -i bytes instead, as nccl-tests)")
    parser.add_argument("-i", "--step-bytes", default=None, metavar="SIZE",
                        help="size increment with -f 0 or 1 (nccl-tests --stepbytes; default 1MiB there); "
                             "-i without -f means -f 1")
    parser.add_argument("-n", "--iters", type=int_arg("iterations -n", 1), default=20, metavar="INT",
                        help="timed iterations per size (default 20)")
    parser.add_argument("--blocks", type=int_arg("timed blocks --blocks", 1), default=1, metavar="INT",
                        help="timed blocks of -n iterations per size; the median block is reported "
                             "(default 1, as nccl-tests; more resists stalls on shared CPUs)")
    parser.add_argument("-w", "--warmup-iters", type=int_arg("warm-up iterations -w", 0), default=5, metavar="INT",
                        help="warm-up iterations per size, untimed (default 5)")
    parser.add_argument("-c", "--check", type=int, default=1, metavar="0|1",
                        help="1: count wrong elements in a separate pass with exact inputs (default 1)")
    parser.add_argument("-d", "--dtype", default="float32", metavar="TYPE",
                        help=f"element type: {', '.join(DTYPE_BYTES)} (default float32; float16/bfloat16 on nccl only)")
    parser.add_argument("-o", "--op", default="sum", metavar="OP",
                        help=f"reduction: {', '.join(REDOPS)} (default sum; all_reduce and reduce_scatter only: the "
                             "others print redop none, as nccl-tests, and the header says -o was ignored)")
    parser.add_argument("-a", "--average", type=int_arg("time over ranks -a", 0), default=3, metavar="0-3",
                        help="time over ranks: 0 rank 0's, 1 mean, 2 minimum, 3 maximum (default 3 here; "
                             "nccl-tests' default is 1)")
    parser.add_argument("-G", "--cudagraph", type=int_arg("CUDA graph launches -G", 0), default=0, metavar="N",
                        help="N >= 1: capture -n operations in a CUDA graph and time N launches of it (NCCL on GPUs "
                             "only; default 0)")
    parser.add_argument("-I", "--per-iter-timing", type=int, default=0, metavar="0|1",
                        help="1: add nccl-tests' per-iteration columns i_min, i_max, i_p99, i_cv%% to the table "
                             "(the results file always has p50/p99)")
    parser.add_argument("--collective", default="all_reduce", metavar="NAME",
                        help=f"collective to measure: {', '.join(BENCH_COLLECTIVES)} (default all_reduce; "
                             "reduce_scatter needs nccl; send_recv is nccl-tests' ring: rank r sends to r+1)")
    parser.add_argument("--backend", default="auto", metavar="NAME",
                        help="auto (NCCL with one GPU per rank if enough GPUs, else gloo on CPU), nccl or gloo")
    parser.add_argument("--ranks", type=int_arg("number of ranks --ranks", 1), default=None, metavar="N",
                        help="local ranks to start (default: the number of GPUs, or 2 without GPUs); "
                             "not used under torchrun")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--out", default=None, metavar="FILE",
                     help="JSON-lines results file, in a folder that exists; an existing file needs --force "
                          "(default results/<collective>-<date>.jsonl, results/ created)")
    out.add_argument("--no-out", action="store_true", help="write no results file")
    parser.add_argument("--force", action="store_true", help="replace an existing --out file (default: refuse it)")
    parser.add_argument("--max-seconds-per-size", type=float, default=None, metavar="S",
                        help="opt-in: cap one timed block at about S seconds; big sizes then run fewer iterations")
    parser.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"process-group timeout: a missing or hung rank fails the run after S seconds "
                             f"(default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    for flag, (long_name, _, _) in NCCL_TESTS_FIXED.items():
        parser.add_argument(flag, long_name, dest=_fixed_dest(long_name), default=None, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def _fixed_dest(long_name: str) -> str:
    return "nccl_tests_" + long_name.lstrip("-")


def check_nccl_tests_options(args: argparse.Namespace) -> None:
    """Refuse the options of :data:`NCCL_TESTS_FIXED` given at another value than the one this command uses.

    Raises
    ------
    GpucommError
        ``-t 4 (nccl-tests --nthreads) is not supported: ...: expected ...``, one line.
    """
    for flag, (long_name, value, instead) in NCCL_TESTS_FIXED.items():
        given = getattr(args, _fixed_dest(long_name), None)
        if given is None:
            continue
        try:
            same = value is not None and int(given, 0) == int(value)  # nccl-tests reads them with strtol(optarg, NULL, 0)
        except ValueError:
            same = False
        if not same:
            raise GpucommError(f"{flag} {given} (nccl-tests {long_name}) is not supported by gpucomm bench: {instead}")


def config_from_args(args: argparse.Namespace) -> SweepConfig:
    """A validated :class:`SweepConfig` from parsed arguments.

    ``args.argv`` (set by ``gpucomm``'s main: the command line as typed) is recorded in the
    results file; ``sys.argv`` where it is missing.

    Raises
    ------
    GpucommError
        A flag out of range or inconsistent with the others.
    """
    if args.no_out:
        out = None
    elif args.out is not None:
        out = args.out
    else:
        out = f"results/{args.collective}-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.jsonl"
    if args.check not in (0, 1):
        raise GpucommError(f"check -c {args.check!r} is not valid: expected 0 or 1")
    if args.average >= len(TIME_OVER_RANKS):
        raise GpucommError(f"time over ranks -a {args.average} is not valid: expected 0 (rank 0), 1 (mean), "
                           "2 (minimum) or 3 (maximum)")
    if args.per_iter_timing not in (0, 1):
        raise GpucommError(f"per-iteration timing -I {args.per_iter_timing!r} is not valid: expected 0 or 1")
    check_nccl_tests_options(args)
    if out is not None and _writes_results(args):
        # the rule of every verb; only the default results/ folder, which gpucomm named, is created
        check_output_file(out, flag="--out", force=args.force, example="results/all_reduce.jsonl",
                          create_folder=args.out is None)
    step_factor = args.step_factor
    if step_factor is None:
        step_factor = 1 if args.step_bytes is not None else 2  # -i alone: nccl-tests' default -f is 1
    return SweepConfig(collective=args.collective, min_bytes=args.min_bytes, max_bytes=args.max_bytes,
                       step_factor=step_factor, step_bytes=args.step_bytes, iters=args.iters, blocks=args.blocks,
                       warmup_iters=args.warmup_iters, check=bool(args.check), dtype=args.dtype, op=args.op,
                       backend=args.backend, out=out, max_seconds_per_size=args.max_seconds_per_size,
                       timeout_s=args.timeout_s, time_over_ranks=TIME_OVER_RANKS[args.average],
                       graph_launches=args.cudagraph, argv=tuple(getattr(args, "argv", None) or sys.argv))


def _writes_results(args: argparse.Namespace) -> bool:
    """True on the rank that writes the results file: rank 0 under torchrun, or this launcher.

    The other ranks of a multi-node job may not even see rank 0's folder, so they do not check it.
    """
    rank = os.environ.get("RANK")
    return rank is None or "WORLD_SIZE" not in os.environ or rank.strip() == "0"


def interrupted_message(config: SweepConfig | None) -> str:
    """What ``gpucomm bench`` says when interrupted: where the finished sizes are, only if some are.

    Examples
    --------
    >>> interrupted_message(None)
    'interrupted'
    >>> interrupted_message(SweepConfig(out="/nonexistent/ar.jsonl"))
    'interrupted before the first size finished: no results file was written'
    """
    if config is None or not config.out:
        return "interrupted"
    from gpucomm.measure.results import read_results

    try:
        saved = read_results(config.out)
    except GpucommError:
        return "interrupted before the first size finished: no results file was written"
    if not saved:
        return f"interrupted before the first size finished: {config.out} holds the metadata only"
    return f"interrupted; finished sizes are in {config.out} ({len(saved)} size{'s' if len(saved) != 1 else ''})"


def run(args: argparse.Namespace) -> int:
    """Run the sweep the parsed ``args`` describe; return the exit status (see the module docstring).

    Raises
    ------
    GpucommError
        No torch, bad flags or a failed rank (printed by ``gpucomm``'s main, exit status 2).
    """
    require_torch("'gpucomm bench'")
    from gpucomm.measure.launch import Terminated

    def on_sigterm(signum, frame):
        raise Terminated()

    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_sigterm) if in_main_thread else None
    config = None
    try:
        config = config_from_args(args)
        from gpucomm.measure.results import TableReporter, sweep_table
        from gpucomm.measure.runner import cuda_device_count, env_rank_info, is_torchrun, run_rank

        progress = False if args.no_progress else None
        table = sweep_table(per_iteration=bool(args.per_iter_timing))
        info = env_rank_info()
        if info is not None:
            if args.ranks is not None:
                raise GpucommError(f"--ranks {args.ranks} is for the local launcher; under torchrun RANK/WORLD_SIZE "
                                   "are set: expected --nproc-per-node to choose the number of ranks")
            reporter = TableReporter(table=table, progress=progress) if info["rank"] == 0 else None
            try:
                results = run_rank(config, **info, launcher="torchrun" if is_torchrun() else "env",
                                   reporter=reporter)
            except GpucommError as exc:  # every rank prints its own error: say which
                raise GpucommError(f"rank {info['rank']}: {exc}") from exc
        else:
            from gpucomm.measure.launch import launch_local

            num_ranks = args.ranks
            if num_ranks is None:
                gpus = cuda_device_count()
                num_ranks = gpus if gpus and config.backend != "gloo" else 2
            results = launch_local(config, num_ranks, reporter=TableReporter(table=table, progress=progress))
    except (KeyboardInterrupt, Terminated) as exc:
        return print_error("bench", interrupted_message(config), status=130 if isinstance(exc, KeyboardInterrupt) else 143)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    if results.num_wrong:
        bad = [r["msg_bytes"] for r in results if r.get("num_wrong")]
        return print_error("bench", f"{results.num_wrong} wrong elements at {len(bad)} sizes (first at {bad[0]} B): "
                           "the collective returned wrong results", status=1)
    return 0
