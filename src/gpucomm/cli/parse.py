"""The ``parse`` command: nccl-tests text output -> the results records of ``gpucomm bench``.

``gpucomm parse LOG`` reads the text an nccl-tests binary printed (``all_reduce_perf`` ... ;
``-`` for standard input; :func:`gpucomm.measure.log_files.read_log_text`), parses it with
:func:`gpucomm.measure.nccl_tests_log.parse_nccl_tests`, prints the rows in the table layout of
``gpucomm bench`` followed by what looks wrong (``# warning [code]: ...`` lines;
:func:`gpucomm.measure.nccl_tests_results.format_log_table`), and with ``--out FILE`` writes the
same JSON-lines results file as ``gpucomm bench --out``: a metadata record, then one result
record per message size (:func:`gpucomm.measure.nccl_tests_results.log_to_results`; see
:mod:`gpucomm.measure.results` for the fields), so :func:`gpucomm.measure.results.read_results`,
:func:`gpucomm.model.fit.fit_sweep` and :func:`gpucomm.viz.figures.measured.measured_vs_model_figure` take
a published log exactly as they take a sweep of your own. ``--json`` prints those lines
instead of the table.

nccl-tests prints an out-of-place and an in-place measurement for every size. ``gpucomm
bench`` measures torch's in-place ``all_reduce``, so the in-place column is used by default
(``--out-of-place`` takes the other one). Values are taken as printed: nccl-tests averages the
time over ranks by default (``-a 1``) where ``gpucomm bench`` reports the slowest rank.

Exit status: 0, or 1 when the log reports wrong results (``#wrong`` > 0, a non-zero
``error`` column, or out-of-bounds values), 2 when the input cannot be read or holds no
result row (one line on stderr: ``gpucomm parse: error: ...``).

This module imports neither torch nor plotly: registering or running ``parse`` works in a
model-only install.

Examples::

    gpucomm parse all_reduce.log
    gpucomm parse all_reduce.log --out results/published.jsonl
    mpirun -np 8 ./build/all_reduce_perf -b 8 -e 8G -f 2 | gpucomm parse - --json
"""

from __future__ import annotations

import argparse
import sys

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg, one_line, print_json
from gpucomm.measure.log_files import read_log_text
from gpucomm.measure.nccl_tests_log import parse_nccl_tests
from gpucomm.measure.nccl_tests_results import format_log_table, log_to_results
from gpucomm.measure.results import ResultsWriter
from gpucomm.model.collectives import COLLECTIVES

__all__ = ["register", "run"]

WRONG_CODES = ("wrong", "error", "out_of_bounds")
"""Warning codes that mean the collective returned wrong results (exit status 1)."""

DESCRIPTION = """Read nccl-tests text output (all_reduce_perf and friends) into the results records of
'gpucomm bench': print the rows as a table with any warnings, and optionally write a JSON-lines
results file (a metadata line, then one line per size)."""
EPILOG = """examples:
  gpucomm parse all_reduce.log
  gpucomm parse all_reduce.log --out results/published.jsonl
  ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8 | gpucomm parse - --json"""


def run(args: argparse.Namespace) -> int:
    """Run ``parse`` with parsed arguments; return the exit status (raises :class:`GpucommError` on bad input)."""
    text = read_log_text(args.log)
    input_name = "standard input" if args.log == "-" else args.log
    try:
        log = parse_nccl_tests(text, collective=args.collective, num_ranks=args.ranks)
    except GpucommError as exc:
        raise GpucommError(f"log {input_name!r}: {one_line(exc)}") from None
    meta, records = log_to_results(log, in_place=not args.out_of_place, input_name=input_name)
    meta["argv"] = list(getattr(args, "argv", None) or sys.argv)
    if args.out:
        with ResultsWriter(args.out) as writer:
            writer.write(meta)
            for r in records:
                writer.write(r)
    if args.json:
        for r in [meta, *records]:
            print_json(r)
    else:
        print(format_log_table(meta, records, input_name))
        if args.out:
            print(f"# Results file       : {args.out}")
    sys.stdout.flush()
    return 1 if any(w["code"] in WRONG_CODES for w in meta["warnings"]) else 0


def register(subparsers) -> None:
    """Add the ``parse`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`.

    :func:`run` raises :class:`gpucomm.GpucommError` (one line) on input it cannot read, which
    ``gpucomm``'s main prints as ``gpucomm parse: error: ...`` with exit status 2.
    """
    parser = subparsers.add_parser("parse", help="read nccl-tests output into gpucomm bench's results records",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", metavar="LOG", help="nccl-tests output (a text file), or - for standard input")
    parser.add_argument("--json", action="store_true",
                        help="print the JSON-lines records (metadata line, then one line per size) instead of the table")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="also write them to a JSON-lines results file, as 'gpucomm bench --out' does")
    parser.add_argument("--out-of-place", action="store_true",
                        help="use the out-of-place column (default: in-place, what 'gpucomm bench' measures)")
    parser.add_argument("--collective", default=None, choices=COLLECTIVES, metavar="NAME",
                        help=f"the collective, when the log does not say: one of {', '.join(COLLECTIVES)}")
    parser.add_argument("--ranks", type=int_arg("number of ranks", 1), default=None, metavar="N",
                        help="the number of ranks, when the log does not say (or says it wrong)")
    parser.set_defaults(func=run)
