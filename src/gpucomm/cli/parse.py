"""The ``parse`` command: nccl-tests output (text or ``-J`` JSON) -> the results records of ``gpucomm bench``.

``gpucomm parse LOG`` reads what an nccl-tests binary printed (``all_reduce_perf`` ... ; ``-`` for
standard input; :func:`gpucomm.measure.logs.files.read_log_text`), or the JSON file it wrote with
``-J``, into one sweep per run (:func:`gpucomm.measure.logs.nccl_tests_results.read_nccl_tests_output`),
prints each run's rows with both placements side by side followed by what looks wrong (``# warning
[code]: ...`` lines; :func:`gpucomm.measure.logs.nccl_tests_results.format_log_table`), and with ``--out
FILE`` writes the same JSON-lines results file as ``gpucomm bench --out``: a metadata record, then one
result record per message size with both placements in it, built as ``gpucomm bench`` builds its own
(:func:`gpucomm.measure.logs.nccl_tests_results.log_to_results`,
:func:`gpucomm.measure.results.sweep_record`; see :mod:`gpucomm.measure.results` for the fields), so
:func:`gpucomm.measure.results.read_results`,
``gpucomm fit`` and :func:`gpucomm.viz.figures.measured.measured_vs_model_figure` take a published log
as they take a sweep of your own. ``--json`` prints those lines instead of the table. A log with
several runs gives several sweeps (``--run N`` keeps one; ``--out`` then writes ``FILE.runN.jsonl``
per run).

nccl-tests prints an out-of-place and an in-place measurement for every size; both are kept (the
record's ``out_of_place`` and ``in_place`` fields). ``gpucomm bench`` measures torch's in-place
``all_reduce``, so the in-place one is at the record's top level (``placement``), which a fit reads,
by default (``--out-of-place`` puts the other one there). Values are taken as
printed: nccl-tests averages the time over ranks by default (``-a 1``) where ``gpucomm bench``
reports the slowest rank.

``--out`` follows the output-path rule of every verb (:mod:`gpucomm.measure.output_paths`): never
the log itself, an existing file only with ``--force``, a folder that exists; a FIFO or
``/dev/stdout`` is written as it is.

Exit status: 0, or 1 when the log reports wrong results (``#wrong`` > 0, an ``error`` column
beyond nccl-tests' own bound, or out-of-bounds values), 2 when the input cannot be read or holds
no result row, a flag is wrong, or the results file cannot be written (one line on stderr:
``gpucomm parse: error: ...``; nothing is written where the error comes before the first record).

This module imports neither torch nor plotly: registering or running ``parse`` works in a
model-only install.

Examples::

    gpucomm parse all_reduce.log
    gpucomm parse all_reduce.log --out results/published.jsonl
    gpucomm parse all_reduce.json --run 2
    mpirun -np 8 ./build/all_reduce_perf -b 8 -e 8G -f 2 | gpucomm parse - --json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpucomm import GpucommError
from gpucomm.cli.common import int_arg, one_line, print_json
from gpucomm.measure.logs.files import read_log_text
from gpucomm.measure.logs.nccl_tests_results import format_log_table, log_to_results, read_nccl_tests_output
from gpucomm.measure.output_paths import check_output_file
from gpucomm.measure.results import ResultsWriter
from gpucomm.model.collectives import COLLECTIVES

__all__ = ["register", "run"]

WRONG_CODES = ("wrong", "error", "out_of_bounds")
"""Warning codes that mean the collective returned wrong results (exit status 1)."""

DESCRIPTION = """Read nccl-tests output (the text all_reduce_perf and friends print, or their -J JSON file)
into the results records of 'gpucomm bench': print each run's rows, both placements, with any
warnings, and optionally write a JSON-lines results file (a metadata line, then one line per size
with both placements)."""
EPILOG = """examples:
  gpucomm parse all_reduce.log
  gpucomm parse all_reduce.log --out results/published.jsonl
  gpucomm parse all_reduce.json --run 2
  ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8 | gpucomm parse - --json"""


def _check_out(args: argparse.Namespace, path: str) -> None:
    """The output-path rule (:func:`gpucomm.measure.output_paths.check_output_file`) for ``--out`` or a per-run file."""
    check_output_file(path, flag="--out", force=args.force, inputs=[args.log], example="results/published.jsonl")


def _run_path(out: str, run: int) -> str:
    """``x.jsonl`` -> ``x.run2.jsonl``: one results file per run when a log holds several."""
    path = Path(out)
    return str(path.with_name(f"{path.stem}.run{run}{path.suffix}"))


def run(args: argparse.Namespace) -> int:
    """Run ``parse`` with parsed arguments; return the exit status (raises :class:`GpucommError` on bad input)."""
    if args.out is not None:
        _check_out(args, args.out)  # before reading: the log must never be the output
    text = read_log_text(args.log)
    input_name = "standard input" if args.log == "-" else args.log
    try:
        runs = read_nccl_tests_output(text, collective=args.collective, num_ranks=args.ranks)
    except GpucommError as exc:
        raise GpucommError(f"log {input_name!r}: {one_line(exc)}") from None
    if args.run is not None:
        if args.run > len(runs):
            raise GpucommError(f"--run {args.run} is out of range: log {input_name!r} holds {len(runs)} run"
                               f"{'s' if len(runs) > 1 else ''}, expected 1 to {len(runs)}")
        runs = runs[args.run - 1:args.run]
    argv = list(getattr(args, "argv", None) or sys.argv)
    results = []
    for log in runs:
        meta, records = log_to_results(log, in_place=not args.out_of_place, input_name=input_name)
        meta["argv"] = argv
        results.append((meta, records))
    files = []
    if args.out is not None:
        several = len(results) > 1
        files = [_run_path(args.out, meta["run"]) if several else args.out for meta, _ in results]
        for path in files if several else []:
            _check_out(args, path)  # every file refused or none written
        for path, (meta, records) in zip(files, results):
            with ResultsWriter(path, replace=args.force) as writer:
                writer.write(meta)
                for r in records:
                    writer.write(r)
    if args.json:
        for meta, records in results:
            for r in [meta, *records]:
                print_json(r)
    else:
        for k, (meta, records) in enumerate(results):
            if k:
                print()
            print(format_log_table(meta, records, input_name))
        total = results[0][0]["runs"]
        if total > 1 and args.run is None:
            print(f"# {total} runs in {input_name}, each its own sweep: select one with --run N (1 to {total})")
        for path in files:
            print(f"# Results file       : {path}")
    sys.stdout.flush()
    return 1 if any(w["code"] in WRONG_CODES for meta, _ in results for w in meta["warnings"]) else 0


def register(subparsers) -> None:
    """Add the ``parse`` parser to ``subparsers`` (from ``ArgumentParser.add_subparsers``); its ``func`` is :func:`run`.

    :func:`run` raises :class:`gpucomm.GpucommError` (one line) on input it cannot read, which
    ``gpucomm``'s main prints as ``gpucomm parse: error: ...`` with exit status 2.
    """
    parser = subparsers.add_parser("parse", help="read nccl-tests output into gpucomm bench's results records",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", metavar="LOG", help="nccl-tests output (a text or -J JSON file), or - for standard input")
    parser.add_argument("--json", action="store_true",
                        help="print the JSON-lines records (metadata line, then one line per size) instead of the table")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="also write them to a JSON-lines results file, as 'gpucomm bench --out' does")
    parser.add_argument("--force", action="store_true", help="replace an existing --out file (default: refuse it)")
    parser.add_argument("--out-of-place", action="store_true",
                        help="fit the out-of-place column (default: in-place, what 'gpucomm bench' measures); "
                             "both are kept")
    parser.add_argument("--collective", default=None, choices=COLLECTIVES, metavar="NAME",
                        help=f"the collective, when the log does not say: one of {', '.join(COLLECTIVES)}")
    parser.add_argument("--ranks", type=int_arg("number of ranks", 1), default=None, metavar="N",
                        help="the number of ranks, when the log does not say (or says it wrong)")
    parser.add_argument("--run", type=int_arg("--run", 1), default=None, metavar="N",
                        help="only the Nth run of a log that holds several (default: every run, each its own sweep; "
                             "--out then writes FILE.runN.jsonl per run)")
    parser.set_defaults(func=run)
