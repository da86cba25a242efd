"""``gpucomm bench``: measure a collective over message sizes, like nccl-tests.

Run as ``gpucomm bench``, ``python -m gpucomm bench`` or ``torchrun ... -m gpucomm bench``.
Importing this module does not import torch: :func:`register` only declares the arguments;
torch is loaded by :func:`run` when a sweep actually runs, and where it is missing ``run``
says so in one line.

Flags follow nccl-tests (``-b -e -f -n -w -c -d -o``; sizes accept ``8``, ``64MiB``,
``128M``). Under torchrun (``RANK``/``WORLD_SIZE`` set) each process is one rank; otherwise
``--ranks N`` local ranks are started. Exit status: 0 when every checked element is right,
1 when any is wrong, 2 on bad input, a failed rank or no torch, 130 on Ctrl-C, 143 on SIGTERM.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import signal
import sys
import threading

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg, print_error, require_torch
from gpucomm.measure.config import BENCH_COLLECTIVES, DEFAULT_TIMEOUT_S, DTYPE_BYTES, REDOPS, SweepConfig

__all__ = ["register", "run", "config_from_args"]

DESCRIPTION = """Measure a collective over message sizes, like nccl-tests: prints size, count, type,
redop, time (us), algbw and busbw (GB/s = 1e9 B/s) and #wrong, and writes a JSON-lines
results file (a metadata line, then one line per size as it finishes)."""
EPILOG = """examples:
  gpucomm bench --ranks 2 -b 8 -e 64MiB -f 2
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
    parser.add_argument("-f", "--step-factor", type=int_arg("step factor -f", 2), default=2, metavar="INT",
                        help="integer factor between sizes, >= 2 (default 2)")
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
                        help=f"reduction: {', '.join(REDOPS)} (default sum; all_reduce and reduce_scatter only)")
    parser.add_argument("--collective", default="all_reduce", metavar="NAME",
                        help=f"collective to measure: {', '.join(BENCH_COLLECTIVES)} (default all_reduce; "
                             "reduce_scatter needs nccl; send_recv is a ping-pong between ranks 0 and 1, one-way time)")
    parser.add_argument("--backend", default="auto", metavar="NAME",
                        help="auto (NCCL with one GPU per rank if enough GPUs, else gloo on CPU), nccl or gloo")
    parser.add_argument("--ranks", type=int_arg("number of ranks --ranks", 1), default=None, metavar="N",
                        help="local ranks to start (default: the number of GPUs, or 2 without GPUs); "
                             "not used under torchrun")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--out", default=None, metavar="FILE",
                     help="JSON-lines results file (default results/<collective>-<date>.jsonl)")
    out.add_argument("--no-out", action="store_true", help="write no results file")
    parser.add_argument("--max-seconds-per-size", type=float, default=None, metavar="S",
                        help="opt-in: cap one timed block at about S seconds; big sizes then run fewer iterations")
    parser.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"process-group timeout: a missing or hung rank fails the run after S seconds "
                             f"(default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(func=run)


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
    elif args.out:
        out = args.out
    else:
        out = f"results/{args.collective}-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.jsonl"
    if args.check not in (0, 1):
        raise GpucommError(f"check -c {args.check!r} is not valid: expected 0 or 1")
    return SweepConfig(collective=args.collective, min_bytes=args.min_bytes, max_bytes=args.max_bytes,
                       step_factor=args.step_factor, iters=args.iters, blocks=args.blocks, warmup_iters=args.warmup_iters,
                       check=bool(args.check), dtype=args.dtype, op=args.op, backend=args.backend, out=out,
                       max_seconds_per_size=args.max_seconds_per_size, timeout_s=args.timeout_s,
                       argv=tuple(getattr(args, "argv", None) or sys.argv))


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
        from gpucomm.measure.results import TableReporter
        from gpucomm.measure.runner import cuda_device_count, env_rank_info, is_torchrun, run_rank

        progress = False if args.no_progress else None
        info = env_rank_info()
        if info is not None:
            if args.ranks is not None:
                raise GpucommError(f"--ranks {args.ranks} is for the local launcher; under torchrun RANK/WORLD_SIZE "
                                   "are set: expected --nproc-per-node to choose the number of ranks")
            reporter = TableReporter(progress=progress) if info["rank"] == 0 else None
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
            results = launch_local(config, num_ranks, reporter=TableReporter(progress=progress))
    except (KeyboardInterrupt, Terminated) as exc:
        kept = f"; finished sizes are in {config.out}" if config is not None and config.out else ""
        return print_error("bench", f"interrupted{kept}", status=130 if isinstance(exc, KeyboardInterrupt) else 143)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    if results.num_wrong:
        bad = [r["msg_bytes"] for r in results if r.get("num_wrong")]
        return print_error("bench", f"{results.num_wrong} wrong elements at {len(bad)} sizes (first at {bad[0]} B): "
                           "the collective returned wrong results", status=1)
    return 0
