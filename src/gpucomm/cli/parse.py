"""The ``parse`` command: nccl-tests text output -> the results records of ``gpucomm bench``.

``gpucomm parse LOG`` reads the text an nccl-tests binary printed (``all_reduce_perf`` ... ;
``-`` for standard input), parses it with :func:`gpucomm.measure.nccl_tests_log.parse_nccl_tests`, prints the
rows in the table layout of ``gpucomm bench`` followed by what looks wrong (``# warning
[code]: ...`` lines), and with ``--out FILE`` writes the same JSON-lines results file as
``gpucomm bench --out``: a metadata record, then one result record per message size (see
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
import datetime as _dt
import sys
from pathlib import Path

import gpucomm
from gpucomm import GpucommError
from gpucomm.cli.common import int_arg, one_line, print_json
from gpucomm.measure.nccl_tests_log import ParsedLog, parse_nccl_tests
from gpucomm.measure.results import SCHEMA_VERSION, ResultsWriter, format_footer, format_header, format_row
from gpucomm.model.collectives import COLLECTIVES, busbw_factor

__all__ = ["register", "run", "log_to_results", "format_log_table", "read_log_text", "DTYPE_NAMES"]

DTYPE_NAMES = {"float": "float32", "half": "float16", "double": "float64", "fp16": "float16", "fp32": "float32",
               "fp64": "float64", "bf16": "bfloat16", "int": "int32", "char": "int8", "uint8": "uint8"}
"""nccl-tests type names -> torch dtype names (as ``gpucomm bench`` records them); others are kept as printed."""

WRONG_CODES = ("wrong", "error", "out_of_bounds")
"""Warning codes that mean the collective returned wrong results (exit status 1)."""

MAX_LOG_BYTES = 64 * 2**20
"""Larger inputs are refused: an nccl-tests log is kilobytes; 64 MiB is a wrong file."""

DESCRIPTION = """Read nccl-tests text output (all_reduce_perf and friends) into the results records of
'gpucomm bench': print the rows as a table with any warnings, and optionally write a JSON-lines
results file (a metadata line, then one line per size)."""
EPILOG = """examples:
  gpucomm parse all_reduce.log
  gpucomm parse all_reduce.log --out results/published.jsonl
  ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8 | gpucomm parse - --json"""


def read_log_text(path: str, expected: str = "the text output of an nccl-tests binary such as all_reduce_perf") -> str:
    """The text of ``path`` (``-``: standard input), undecodable bytes replaced.

    ``expected`` ends the error messages (what the verb reads); ``gpucomm diagnose`` shares this reader.

    Raises
    ------
    GpucommError
        One line: the file is missing, a directory, unreadable, larger than
        :data:`MAX_LOG_BYTES`, or binary (NUL bytes).
    """
    if path == "-":
        data = sys.stdin.buffer.read(MAX_LOG_BYTES + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        where = "standard input"
    else:
        p = Path(path)
        try:
            with p.open("rb") as f:
                data = f.read(MAX_LOG_BYTES + 1)
        except OSError as exc:
            raise GpucommError(f"cannot read log {path!r}: {exc.strerror or type(exc).__name__}") from None
        where = repr(path)
    if len(data) > MAX_LOG_BYTES:
        raise GpucommError(f"log {where} is larger than {MAX_LOG_BYTES // 2**20} MiB: expected {expected}")
    if b"\x00" in data:
        raise GpucommError(f"log {where} is binary (it contains NUL bytes): expected {expected}")
    return data.decode("utf-8", errors="replace")


def _dtype(type_name: str) -> str:
    return DTYPE_NAMES.get(type_name.lower(), type_name.lower())


def log_to_results(log: ParsedLog, *, in_place: bool = True, input_name: str | None = None) -> tuple[dict, list[dict]]:
    """The metadata record and result records (``gpucomm bench``'s schema) of a parsed log.

    Parameters
    ----------
    log : ParsedLog
        From :func:`gpucomm.measure.nccl_tests_log.parse_nccl_tests`.
    in_place : bool
        Use the in-place column (default, what ``gpucomm bench`` measures) or the out-of-place
        one. When the chosen column has no time at any size, the other one is used (noted in
        the metadata's ``placement_note``).
    input_name : str or None
        Where the text came from, recorded in the metadata.

    Returns
    -------
    (dict, list of dict)
        The ``"record": "meta"`` object and one ``"record": "result"`` per size, in size
        order. ``collective`` and ``num_ranks`` are None when the log does not say (then
        ``busbw_factor`` is None too).

    Examples
    --------
    >>> from gpucomm.measure.nccl_tests_log import read_bundled_log
    >>> meta, rows = log_to_results(read_bundled_log("C04"))
    >>> meta["num_ranks"], meta["collective"], rows[-1]["msg_bytes"], rows[-1]["busbw_bytes_per_s"] / 1e9
    (4, 'all_reduce', 8589934592, 234.74)
    """
    m = log.metadata
    placement_note = None
    chosen = log.in_place() if in_place else log.out_of_place()
    if not any(r.time_us for r in chosen):
        other = log.out_of_place() if in_place else log.in_place()
        if any(r.time_us for r in other):
            placement_note = (f"no {'in-place' if in_place else 'out-of-place'} times in the log: the "
                              f"{'out-of-place' if in_place else 'in-place'} column is used")
            chosen, in_place = other, not in_place
    chosen = [r for r in chosen if r.time_us is not None and r.time_us > 0]
    collective, n = m.get("collective"), m.get("num_ranks")
    factor = busbw_factor(collective, n) if collective in COLLECTIVES and n else None
    dtypes = sorted({_dtype(r.type) for r in chosen})
    ops = sorted({r.redop for r in chosen if r.redop})
    records = [{
        "record": "result",
        "collective": collective,
        "msg_bytes": r.size_bytes,
        "count": r.count,
        "dtype": _dtype(r.type),
        "op": r.redop,
        "num_ranks": n,
        "iters": m.get("iters"),
        "blocks": 1,
        "warmup_iters": m.get("warmup_iters"),
        "time_s": r.time_us * 1e-6,
        "algbw_bytes_per_s": r.algbw_gbps * 1e9,
        "busbw_bytes_per_s": r.busbw_gbps * 1e9,
        "num_wrong": r.wrong,
        "in_place": in_place,
        "line": r.line,
    } for r in chosen]
    devices = m.get("devices") or []
    sizes = [r.size_bytes for r in chosen]
    meta = {
        "record": "meta",
        "schema": SCHEMA_VERSION,
        "tool": "gpucomm.parse",
        "source_tool": "nccl-tests",
        "gpucomm_version": gpucomm.__version__,
        "date": None,  # nccl-tests prints no date
        "parsed_at": _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "input": input_name,
        "source": m.get("source"),
        "host": devices[0]["host"] if devices else None,
        "hosts": sorted({d["host"] for d in devices}),
        "rank_hosts": [d["host"] for d in devices],
        "devices": [f"{d.get('name') or 'GPU'} (device {d.get('device')}, bus {d.get('bus_id')})" for d in devices],
        "num_ranks": n,
        "num_ranks_source": m.get("num_ranks_source"),
        "backend": "nccl",
        "backend_note": None,
        "launcher": None,
        "collective": collective,
        "collective_source": m.get("collective_source"),
        "dtype": dtypes[0] if len(dtypes) == 1 else ",".join(dtypes),
        "op": ops[0] if len(ops) == 1 else (",".join(ops) if ops else None),
        "min_bytes": m.get("minBytes", min(sizes) if sizes else None),
        "max_bytes": m.get("maxBytes", max(sizes) if sizes else None),
        "step_factor": m.get("step_factor"),
        "step_bytes": m.get("step_bytes"),
        "iters": m.get("iters"),
        "blocks": 1,
        "warmup_iters": m.get("warmup_iters"),
        "check": None if m.get("validation") is None else bool(m.get("validation")),
        "busbw_factor": factor,
        "placement": "in-place" if in_place else "out-of-place",
        "placement_note": placement_note,
        "timing": "as printed by nccl-tests (average over ranks by default, -a 1)",
        "nccl_version": m.get("nccl_version"),
        "nccl_tests_version": m.get("version"),
        "command": m.get("command"),
        "layout": m.get("layout"),
        "avg_busbw_bytes_per_s": m["avg_busbw_gbps"] * 1e9 if m.get("avg_busbw_gbps") is not None else None,
        "warnings": [{"code": w.code, "message": w.message} for w in log.warnings],
        "env": {},
        "argv": [],
    }
    return meta, records


def format_log_table(meta: dict, records: list[dict], input_name: str) -> str:
    """The text ``gpucomm parse`` prints: a header, ``gpucomm bench``'s columns, the footer, the warnings.

    Parameters
    ----------
    meta, records
        From :func:`log_to_results`.
    input_name : str
        Named in the first line.
    """
    m = meta
    n = m["num_ranks"] if m["num_ranks"] is not None else "?"
    how = f" (from {m['num_ranks_source']})" if m.get("num_ranks_source") else ""
    version = f"nccl-tests {m['nccl_tests_version']}" if m.get("nccl_tests_version") else "nccl-tests"
    nccl = f", NCCL {m['nccl_version']}" if m.get("nccl_version") else ""
    lines = [f"# parsed {input_name}: {version}{nccl}, {m['collective'] or 'collective ?'}, {n} ranks{how}, "
             f"{m['dtype'] or '?'} {m['op'] or ''}, {m['placement']} column".rstrip()]
    if m.get("source"):
        lines.append(f"# source: {m['source']}")
    if m.get("command"):
        lines.append(f"# command: {m['command']}")
    for rank, (host, device) in enumerate(zip(m.get("rank_hosts", []), m.get("devices", []))):
        lines.append(f"#  rank {rank:3d} on {host}: {device}")
    factor = m["busbw_factor"]
    lines.append("# time: as printed (nccl-tests averages over ranks by default); GB/s = 1e9 B/s; busbw as printed"
                 + (f" (= algbw * {factor:g})" if factor is not None else ""))
    # the column titles of gpucomm bench's table: the last two lines of its header
    lines += format_header({}).splitlines()[-2:]
    rows = [dict(r, dtype=r["dtype"] or "?", op=r["op"] or "-") for r in records]
    lines += [format_row(r) for r in rows]
    lines.append(format_footer(rows))
    if m.get("placement_note"):
        lines.append(f"# note: {m['placement_note']}")
    for w in m["warnings"]:
        lines.append(f"# warning [{w['code']}]: {w['message']}")
    if m["collective"] is None or m["num_ranks"] is None:
        lines.append("# warning [unknown_shape]: the log does not say which collective or how many ranks (no command "
                     "line, no device list); pass --collective and --ranks to record them")
    return "\n".join(lines)


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
