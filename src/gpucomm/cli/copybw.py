"""``gpucomm copybw``: copy bandwidth, host to device and back, device memory, GPU to GPU.

Reads the flags and runs :func:`gpucomm.measure.copy_bandwidth.measure_copy_bandwidth`, which
prints a row per kind and size as it finishes and optionally writes a JSON-lines results file.
Importing this module does not import torch; :func:`run` says in one line where torch is missing.
``--out`` follows the output-path rule of every verb (:mod:`gpucomm.measure.output_paths`): an
existing file only with ``--force``, a folder that exists. Exit status: 0, 2 on bad input, a results
file that cannot be written (a full disk: the rows before it are kept) or without torch, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse

from gpucomm.cli.common import int_arg, print_error, require_torch
from gpucomm.measure.copy_bandwidth import COPY_KINDS, measure_copy_bandwidth
from gpucomm.measure.output_paths import check_output_file

__all__ = ["register", "run"]

DESCRIPTION = """Measure copy bandwidth: host to device and back (pinned and pageable memory), device to
device (HBM), GPU to GPU (peer copies, with 2 GPUs), or host memory copies on a machine without a GPU.
Prints kind, size, time per copy (us) and bandwidth (GB/s = 1e9 B/s, bytes copied per second)."""
EPILOG = """examples:
  gpucomm copybw                                   every kind this machine can run, 4 KiB to 64 MiB
  gpucomm copybw -b 1MiB -e 1GiB -f 2 --kinds h2d_pinned,h2d_pageable --out copy.jsonl
  gpucomm copybw --kinds host_torch,host_numpy     host memory only"""


def register(subparsers) -> None:
    """Add the ``copybw`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`."""
    parser = subparsers.add_parser("copybw", help="measure copy bandwidth: host<->device, HBM, GPU to GPU (needs torch)",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-b", "--min-bytes", default="4KiB", metavar="SIZE",
                        help="smallest copy: bytes or with a unit, e.g. 4096, 4KiB, 1M (default 4KiB)")
    parser.add_argument("-e", "--max-bytes", default="64MiB", metavar="SIZE", help="largest copy (default 64MiB)")
    parser.add_argument("-f", "--step-factor", type=int_arg("step factor -f", 2), default=4, metavar="INT",
                        help="integer factor between sizes, >= 2 (default 4)")
    parser.add_argument("-n", "--iters", type=int_arg("iterations -n", 1), default=20, metavar="INT",
                        help="timed copies per block (default 20)")
    parser.add_argument("-w", "--warmup-iters", type=int_arg("warm-up iterations -w", 0), default=5, metavar="INT",
                        help="untimed copies per size (default 5)")
    parser.add_argument("--blocks", type=int_arg("timed blocks --blocks", 1), default=3, metavar="INT",
                        help="timed blocks per size; the median block is reported (default 3)")
    parser.add_argument("--kinds", default=None, metavar="LIST",
                        help="comma-separated kinds: " + ", ".join(COPY_KINDS)
                             + " (default: every kind this machine can run)")
    parser.add_argument("--device", type=int_arg("device", 0), default=0, metavar="INT",
                        help="GPU for host/device copies (default 0)")
    parser.add_argument("--out", default=None, metavar="FILE", help="JSON-lines results file (default: none)")
    parser.add_argument("--force", action="store_true", help="replace an existing --out file (default: refuse it)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Measure the copies ``args`` describe; return 0, or 130 on Ctrl-C.

    Raises
    ------
    GpucommError
        No torch, or a bad size, kind or device (printed by ``gpucomm``'s main, exit status 2).
    """
    if args.out is not None:  # the rule of every verb, before any copy
        check_output_file(args.out, flag="--out", force=args.force, example="copy.jsonl")
    require_torch("copy bandwidth")  # one clear line rather than a traceback
    try:
        measure_copy_bandwidth(args.kinds, min_bytes=args.min_bytes, max_bytes=args.max_bytes,
                               step_factor=args.step_factor, iters=args.iters, warmup_iters=args.warmup_iters,
                               blocks=args.blocks, device=args.device, out=args.out)
    except KeyboardInterrupt:
        kept = f"; finished rows are in {args.out}" if args.out else ""
        return print_error("copybw", f"interrupted{kept}", status=130)
    return 0
