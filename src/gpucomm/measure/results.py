"""Results of every measurement: one JSON-lines file format and one table printer (no torch).

The collective sweep (``gpucomm bench``, :func:`gpucomm.measure.run_sweep`), copy bandwidth
(``gpucomm copybw``) and the TP layer (:func:`gpucomm.measure.tp_layer.run_tp_layer`) write
the same kind of results file, one JSON object per line. The first is the metadata record
(``"record": "meta"``, built by :func:`gpucomm.measure.harness.metadata_record`: tool, host,
devices, world size, backend, versions, ``NCCL_*`` variables, date, command line); then one
record per measurement, written and synced to disk (``os.fsync``) by :class:`ResultsWriter` as
soon as that measurement finishes, so an interrupted run keeps every record it finished.
:func:`read_results` reads any of them back.

Sweep result record fields (``"record": "result"``; SI units, the unit in the name)::

    collective, msg_bytes, count, dtype, op, num_ranks, iters, blocks, warmup_iters,
    time_s            time of one operation, reduced over ranks as -a says (the maximum by default)
    algbw_bytes_per_s msg_bytes / time_s
    busbw_bytes_per_s algbw * busbw_factor(collective, num_ranks)
    num_wrong         wrong elements summed over ranks and checked placements (None when the check is off)
    placement         which measurement the fields above are: gpucomm bench, "out_of_place" where
                      torch.distributed has that call, else "in_place" (all_reduce, broadcast): what
                      was measured before both placements were; gpucomm parse, "in_place" unless
                      --out-of-place (a size that lacks it: the other)
    root              nccl-tests' root column: the root rank of broadcast, else -1 (gpucomm parse:
                      as printed, None in the log layouts without the column)
    iter_min_s, iter_p50_s, iter_p99_s, iter_max_s, iter_mean_s, iter_stdev_s
                      that measurement's per-iteration times (each the maximum over ranks),
                      None under CUDA graphs (gpucomm.measure.runner.iteration_stats)
    out_of_place, in_place
                      each measurement as nccl-tests prints it side by side: a dict of time_s,
                      algbw_bytes_per_s, busbw_bytes_per_s, num_wrong (None where not checked),
                      num_wrong_ranks, iters and the iter_* fields; None where not measured

Both tools build these records with :func:`sweep_record`. Records written before the
out-of-place and in-place columns lack the fields from ``placement`` on; the table prints their
one measurement in its column, and a fit reads the top level of every record alike.

Copy records (``"record": "copy"``) and TP-layer records (``"record": "tp_layer"``) are
described in their modules, with their tables (:data:`gpucomm.measure.copy_bandwidth.COPY_TABLE`,
:data:`gpucomm.measure.tp_layer.TP_LAYER_TABLE`); every table is a :class:`Table`, printed
whole by :meth:`Table.format` or row by row by :class:`TableReporter`.

References
----------
nccl-tests ``doc/PERFORMANCE.md`` (v2.19.6) for algbw and busbw; the table layout copies the
output of nccl-tests' ``all_reduce_perf``.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO

from gpucomm.measure.config import CHUNKED_COLLECTIVES, PLACEMENTS
from gpucomm.measure.output_paths import check_results_path  # noqa: F401 - re-exported: runner, launch
from gpucomm.measure.results_file import Results, ResultsWriter, SweepResults, read_results  # noqa: F401 - re-exported
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.units import format_size, to_gb_per_s

#: Version of the results-file layout (the ``schema`` field of every metadata record).
SCHEMA_VERSION = 1


# --- the table printer ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    """One column of a :class:`Table`: title, unit line, width in characters, and its cell.

    Attributes
    ----------
    title, unit : str
        The two header lines (``"time"``, ``"(us)"``).
    width : int
        Characters, right-aligned, including the space that separates it from the previous column.
    cell : callable
        ``cell(record) -> str``, the text of this column for one record.
    group : str
        A title shared by consecutive columns, printed centred above them (nccl-tests'
        ``out-of-place`` and ``in-place``); empty for none.
    """

    title: str
    unit: str
    width: int
    cell: Callable[[dict], str]
    group: str = ""


@dataclass(frozen=True)
class Table:
    """A text table in the layout of nccl-tests' output: ``#`` comment lines, rows, ``#`` summary lines.

    Attributes
    ----------
    columns : tuple of Column
        The columns, left to right.
    comments : callable
        ``comments(meta) -> list of str``: the header lines before the column titles (with their ``#``).
    summary : callable
        ``summary(records) -> list of str``: the lines after the last row (with their ``#``).
    mark : callable or None
        ``mark(record) -> str`` appended to a row (``"  WRONG"``), or None.
    """

    columns: tuple[Column, ...]
    comments: Callable[[dict], list[str]]
    summary: Callable[[list[dict]], list[str]]
    mark: Callable[[dict], str] | None = None

    def header(self, meta: dict) -> str:
        """The comment lines, the group titles (if any) and the two lines of column titles printed before the first row."""
        lines = list(self.comments(meta))
        if any(c.group for c in self.columns):
            groups = itertools.groupby(self.columns, key=lambda c: c.group)
            line = "".join(f"{name:^{sum(c.width for c in cols)}}" for name, cols in ((n, list(g)) for n, g in groups))
            lines.append(("#" + line[1:]).rstrip())
        lines.append("#" + "".join(f"{c.title:>{c.width}}" for c in self.columns)[1:])
        lines.append("#" + "".join(f"{c.unit:>{c.width}}" for c in self.columns)[1:])
        return "\n".join(lines)

    def row(self, record: dict) -> str:
        """One row for a record."""
        row = "".join(f"{c.cell(record):>{c.width}}" for c in self.columns)
        return row + (self.mark(record) if self.mark else "")

    def footer(self, records: Iterable[dict]) -> str:
        """The summary lines after the last row."""
        return "\n".join(self.summary(list(records)))

    def format(self, records: Iterable[dict], meta: dict | None = None) -> str:
        """The whole table: header (from ``meta``, default ``records.meta``), rows, footer."""
        meta = meta if meta is not None else getattr(records, "meta", {})
        records = list(records)
        return "\n".join([self.header(meta)] + [self.row(r) for r in records] + [self.footer(records)])


def format_time_us(time_s: float) -> str:
    """Microseconds for a table cell: 2 decimals below 10 ms, 1 below 1 s, none above.

    Examples
    --------
    >>> format_time_us(12.3456e-6), format_time_us(0.0123456), format_time_us(2.5)
    ('12.35', '12345.6', '2500000')
    """
    us = time_s * 1e6
    if us < 1e4:
        return f"{us:.2f}"
    if us < 1e6:
        return f"{us:.1f}"
    return f"{us:.0f}"


def format_nccl_tests_number(value: float, width: int) -> str:
    """A number in at most ``width`` characters as nccl-tests prints its table cells.

    nccl-tests' ``getFloatStr`` (``src/util.cu``, v2.19.6): 2 decimals if they fit, else 1, else
    none, else scientific notation; time is printed in 7 characters, algbw and busbw in 6.

    Examples
    --------
    >>> format_nccl_tests_number(12.3456, 7), format_nccl_tests_number(12345.6, 7), format_nccl_tests_number(1234567.8, 7)
    ('12.35', '12345.6', '1234568')
    >>> format_nccl_tests_number(0.004, 6), format_nccl_tests_number(1234.5, 6)
    ('0.00', '1234.5')
    """
    for spec in (".2f", ".1f", ".0f"):
        text = f"{value:{spec}}"
        if len(text) <= width:
            return text
    return f"{value:.1e}" if width >= 7 else f"{value:.0e}"


def format_average(value: float) -> str:
    """The average bus bandwidth of the summary: nccl-tests' ``%g`` (6 significant digits), never an exponent.

    nccl-tests prints ``# Avg bus bandwidth    : %g``, which turns into scientific notation below
    1e-4 GB/s (a CPU run of small sizes); here the same digits are written out instead.

    Examples
    --------
    >>> format_average(224.86512), format_average(0.0679712345), format_average(0.0000512345), format_average(0.0)
    ('224.865', '0.0679712', '0.0000512345', '0')
    >>> format_average(3000000.0)
    '3000000'
    """
    text = f"{value:g}"
    if "e" not in text:
        return text
    digits = max(0, 5 - math.floor(math.log10(abs(value))))  # 6 significant digits, as %g
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def placement_record(record: dict, placement: str) -> dict | None:
    """One measurement of a sweep record (``out_of_place`` or ``in_place``), or None where it was not measured.

    A record written before both placements were measured (no ``out_of_place`` key) holds one
    measurement at its top level: the in-place one for all_reduce and broadcast (torch's calls
    work in place), the out-of-place one for the others.
    """
    if "out_of_place" in record or "in_place" in record:
        return record.get(placement)
    legacy = record.get("placement") or (
        "in_place" if record.get("collective", "all_reduce") in ("all_reduce", "broadcast") else "out_of_place")
    return record if placement == legacy else None


ITER_KEYS = ("iter_min_s", "iter_p50_s", "iter_p99_s", "iter_max_s", "iter_mean_s", "iter_stdev_s")
"""The per-iteration statistics of one measurement, seconds (nccl-tests ``-I 1``;
:func:`gpucomm.measure.runner.iteration_stats` computes them)."""

MEASUREMENT_KEYS = ("time_s", "algbw_bytes_per_s", "busbw_bytes_per_s", "num_wrong", "num_wrong_ranks",
                    "iters") + ITER_KEYS
"""The fields of one placement's measurement: the ``out_of_place`` and ``in_place`` dicts of a sweep record."""


def sweep_record(*, collective: str | None, msg_bytes: int, count: int, dtype: str | None, op: str | None,
                 num_ranks: int | None, blocks: int, warmup_iters: int | None, root: int | None,
                 measured: dict[str, dict | None], primary: str = "out_of_place") -> dict:
    """The result record of one message size from its out-of-place and in-place measurements.

    The one builder of sweep result records: ``gpucomm bench`` (:func:`gpucomm.measure.runner.measure_size`)
    and ``gpucomm parse`` (:func:`gpucomm.measure.logs.nccl_tests_results.log_to_results`) both call
    it, so their records have the same fields in the same order (see the module docstring).

    Parameters
    ----------
    collective, msg_bytes, count, dtype, op, num_ranks, blocks, warmup_iters, root
        The record's fields of the same names (``msg_bytes`` in bytes, ``count`` in elements).
    measured : dict
        ``{"out_of_place": dict or None, "in_place": dict or None}``: each placement's
        measurement, with fields from :data:`MEASUREMENT_KEYS` (those left out are recorded as
        None), or None where it was not measured. At least one must be measured.
    primary : str
        The placement whose fields go to the record's top level (``placement``) where it was
        measured; else the other one is.

    Returns
    -------
    dict
        ``"record": "result"``, the fields above, the top-level fields of the primary
        measurement, ``num_wrong`` summed over the checked placements (None when neither was),
        ``placement``, ``root``, the ``iter_*`` fields, then ``out_of_place`` and ``in_place``.

    Raises
    ------
    ValueError
        Neither placement measured, an unknown placement, or a field not in :data:`MEASUREMENT_KEYS`.

    Examples
    --------
    >>> r = sweep_record(collective="all_reduce", msg_bytes=8, count=2, dtype="float32", op="sum", num_ranks=2,
    ...                  blocks=1, warmup_iters=5, root=-1, primary="in_place",
    ...                  measured={"out_of_place": None, "in_place": {"time_s": 2e-5, "num_wrong": 0}})
    >>> r["placement"], r["time_s"], r["num_wrong"], r["out_of_place"], r["in_place"]["iter_p50_s"]
    ('in_place', 2e-05, 0, None, None)
    """
    if primary not in PLACEMENTS or set(measured) != set(PLACEMENTS):
        raise ValueError(f"placements {primary!r}, {sorted(measured)}: expected {' and '.join(PLACEMENTS)}")
    halves: dict[str, dict | None] = {}
    for placement in PLACEMENTS:
        m = measured[placement]
        if m is not None and set(m) - set(MEASUREMENT_KEYS):
            raise ValueError(f"{placement} fields {sorted(set(m) - set(MEASUREMENT_KEYS))} are not measurement fields: "
                             f"expected some of {', '.join(MEASUREMENT_KEYS)}")
        halves[placement] = None if m is None else {k: m.get(k) for k in MEASUREMENT_KEYS}
    placement = primary if halves[primary] is not None else next((p for p in PLACEMENTS if halves[p] is not None), None)
    if placement is None:
        raise ValueError(f"size {msg_bytes} B: neither placement was measured")
    main = halves[placement]
    checked = [m["num_wrong"] for m in halves.values() if m is not None and m["num_wrong"] is not None]
    return {
        "record": "result",
        "collective": collective,
        "msg_bytes": msg_bytes,
        "count": count,
        "dtype": dtype,
        "op": op,
        "num_ranks": num_ranks,
        "iters": main["iters"],
        "blocks": blocks,
        "warmup_iters": warmup_iters,
        "time_s": main["time_s"],
        "algbw_bytes_per_s": main["algbw_bytes_per_s"],
        "busbw_bytes_per_s": main["busbw_bytes_per_s"],
        "num_wrong": sum(checked) if checked else None,
        "placement": placement,
        "root": root,
        **{k: main[k] for k in ITER_KEYS},
        "out_of_place": halves["out_of_place"],
        "in_place": halves["in_place"],
    }


def _measurements(record: dict) -> list[dict]:
    return [m for m in (placement_record(record, p) for p in PLACEMENTS) if m is not None]


def _half_cell(placement: str, cell: Callable[[dict], str]) -> Callable[[dict], str]:
    """A column of one placement: empty where it was not measured (nccl-tests' null body)."""
    def text(record: dict) -> str:
        m = placement_record(record, placement)
        return "" if m is None else cell(m)
    return text


def _iter_us(key: str) -> Callable[[dict], str]:
    return lambda m: "N/A" if m.get(key) is None else format_nccl_tests_number(m[key] * 1e6, 7)


def _iter_cv(m: dict) -> str:
    if m.get("iter_mean_s") is None or m.get("iter_stdev_s") is None:
        return "N/A"
    return format_nccl_tests_number(100 * m["iter_stdev_s"] / m["iter_mean_s"] if m["iter_mean_s"] > 0 else 0.0, 7)


def _placement_columns(placement: str, per_iteration: bool) -> tuple[Column, ...]:
    """nccl-tests' columns of one placement: time algbw busbw #wrong (then i_min i_max i_p99 i_cv% with ``-I 1``)."""
    title = placement.replace("_", "-") + (" (+ per-iteration)" if per_iteration else "")
    cells = [
        ("time", "(us)", 9, lambda m: format_nccl_tests_number(m["time_s"] * 1e6, 7)),
        ("algbw", "(GB/s)", 8, lambda m: format_nccl_tests_number(to_gb_per_s(m["algbw_bytes_per_s"]), 6)),
        ("busbw", "(GB/s)", 8, lambda m: format_nccl_tests_number(to_gb_per_s(m["busbw_bytes_per_s"]), 6)),
        ("#wrong", "", 8, lambda m: "N/A" if m.get("num_wrong") is None else str(m["num_wrong"])),
    ]
    if per_iteration:
        cells += [("i_min", "(us)", 9, _iter_us("iter_min_s")), ("i_max", "(us)", 9, _iter_us("iter_max_s")),
                  ("i_p99", "(us)", 9, _iter_us("iter_p99_s")), ("i_cv%", "(%)", 9, _iter_cv)]
    return tuple(Column(name, unit, width, _half_cell(placement, cell), group=title) for name, unit, width, cell in cells)


def _count_cell(record: dict) -> str:
    """Elements as nccl-tests prints them: per rank for the chunked collectives (``paramcount``)."""
    if record.get("collective") in CHUNKED_COLLECTIVES and record.get("num_ranks"):
        return str(record["count"] // record["num_ranks"])
    return str(record["count"])


_OVER_RANKS = {"rank0": "rank 0's time (-a 0)", "avg": "the mean over ranks (-a 1)",
               "min": "the minimum over ranks (-a 2)",
               "max": "the maximum over ranks (-a 3; nccl-tests' default -a 1 is the mean)"}


def _sweep_comments(meta: dict) -> list[str]:
    m = meta.get
    step = (f"+{format_size(m('step_bytes'))}" if m("step_bytes") and (m("step_factor") or 0) <= 1
            else f"x{m('step_factor', '?')}")
    lines = [
        f"# gpucomm.measure {m('collective', '?')}: {m('num_ranks', '?')} ranks, backend {m('backend', '?')}, "
        f"{m('dtype', '?')} {m('op', '?')}, {format_size(m('min_bytes', 0))} to {format_size(m('max_bytes', 0))} "
        f"step {step}, iters {m('iters', '?')}"
        + (f" x {m('blocks')} blocks" if m("blocks", 1) > 1 else "") + ", "
        f"warm-up {m('warmup_iters', '?')}, check {int(bool(m('check', 0)))}"
        + (f", graph {m('graph_launches')}" if m("graph_launches") else ""),
    ]
    if meta.get("backend_note"):
        lines.append(f"# {meta['backend_note']}")
    for rank, (host, device) in enumerate(zip(meta.get("rank_hosts", []), meta.get("devices", []))):
        lines.append(f"#  rank {rank:3d} on {host}: {device}")
    if meta.get("timing_note"):
        lines.append(f"# {meta['timing_note']}")
    if meta.get("op_ignored"):
        lines.append(f"# -o {m('requested_op')} ignored: {m('collective')} does not reduce (redop none, as nccl-tests)")
    if meta.get("placement_note"):
        lines.append(f"# {meta['placement_note']}")
    if m("graph_launches"):
        lines.append(f"# -G {m('graph_launches')}: each timed block launches a CUDA graph of iters operations "
                     f"{m('graph_launches')} times; time = block / (iters x {m('graph_launches')})")
    median = ", median of blocks" if m("blocks", 1) > 1 else ""
    over = _OVER_RANKS.get(m("time_over_ranks") or "max", "?")
    lines.append(f"# time: one operation, {over}{median}; GB/s = 1e9 B/s; "
                 f"busbw = algbw * {m('busbw_factor', '?')} (nccl-tests doc/PERFORMANCE.md)")
    return lines


def _per_iteration_comments(meta: dict) -> list[str]:
    return _sweep_comments(meta) + [
        "# i_*: per-iteration times, each the maximum over ranks (nccl-tests -I 1); i_p99 nearest rank "
        "(i_max below 100 iterations); i_cv% = stdev / mean"]


def _sweep_summary(records: list[dict]) -> list[str]:
    """The summary lines of nccl-tests (``writeResultFooter``, ``src/util.cu``, v2.19.6), and the 1-rank note.

    ``Out of bounds values`` counts, as nccl-tests, the measurements (size and placement) with a
    wrong element, once per rank that saw one; ``Avg bus bandwidth`` is the mean busbw of every
    measurement, out-of-place and in-place, in GB/s.
    """
    measured = [m for r in records for m in _measurements(r)]
    checked = [m for m in measured if m.get("num_wrong") is not None]
    out_of_bounds = sum(m["num_wrong_ranks"] if m.get("num_wrong_ranks") is not None else int(m["num_wrong"] > 0)
                        for m in checked)
    status = f"{out_of_bounds} {'FAILED' if out_of_bounds else 'OK'}" if checked else "N/A (check off)"
    avg = sum(to_gb_per_s(m["busbw_bytes_per_s"]) for m in measured) / len(measured) if measured else 0.0
    lines = [f"# {'Out of bounds values':<20} : {status}",
             f"# {'Avg bus bandwidth':<20} : {format_average(avg)}"]
    one_rank = {r.get("collective") for r in records if r.get("num_ranks") == 1 and r.get("collective")}
    for collective in sorted(c for c in one_rank if busbw_factor(c, 1) == 0):
        lines.append(f"# busbw is 0 on 1 rank by definition: {collective}'s bus factor is 0 at n = 1, no data "
                     "crosses a link (nccl-tests doc/PERFORMANCE.md); algbw is the figure to read")
    return lines


def _wrong_mark(record: dict) -> str:
    return "  WRONG" if record.get("num_wrong") or any(m.get("num_wrong") for m in _measurements(record)) else ""


def sweep_table(per_iteration: bool = False) -> Table:
    """The collective sweep's table: nccl-tests' columns, out-of-place then in-place.

    Parameters
    ----------
    per_iteration : bool
        Add nccl-tests' ``-I 1`` columns to each placement: ``i_min``, ``i_max``, ``i_p99``
        (us) and ``i_cv%`` from the per-iteration times of the records.

    Returns
    -------
    Table
        ``size count type redop root``, then ``time algbw busbw #wrong`` for each placement, as
        ``all_reduce_perf`` prints them (``count`` per rank for the chunked collectives; the
        columns of a placement torch.distributed cannot run stay empty).
    """
    return Table(
        columns=(
            Column("size", "(B)", 12, lambda r: str(r["msg_bytes"])),
            Column("count", "(elements)", 14, _count_cell),
            Column("type", "", 10, lambda r: r["dtype"]),
            Column("redop", "", 8, lambda r: r["op"]),
            Column("root", "", 8, lambda r: str(r.get("root", 0 if r.get("collective") == "broadcast" else -1))),
        ) + _placement_columns("out_of_place", per_iteration) + _placement_columns("in_place", per_iteration),
        comments=_per_iteration_comments if per_iteration else _sweep_comments,
        summary=_sweep_summary,
        mark=_wrong_mark,
    )


#: The collective sweep's table (the columns of nccl-tests' ``all_reduce_perf``, out-of-place and in-place).
SWEEP_TABLE = sweep_table()


def format_header(meta: dict) -> str:
    """The sweep table's comment lines and column titles, printed before the first row."""
    return SWEEP_TABLE.header(meta)


def format_row(record: dict) -> str:
    """One sweep table row for a result record; a row with wrong elements ends in ``WRONG``."""
    return SWEEP_TABLE.row(record)


def format_footer(records: list[dict]) -> str:
    """Summary lines after the last row: out-of-bounds values and the average busbw (as nccl-tests)."""
    return SWEEP_TABLE.footer(records)


def format_table(results: SweepResults | list[dict], meta: dict | None = None) -> str:
    """The whole sweep table (header, rows, footer) as printed during a sweep."""
    return SWEEP_TABLE.format(results, meta)


class TableReporter:
    """Print a table as a measurement runs: header, one row per finished record, footer.

    Rows go to ``stream`` (default: ``sys.stdout`` when created); an optional tqdm
    progress bar goes to stderr and never into the table.

    Parameters
    ----------
    table : Table
        What to print (default: the sweep's table, :data:`SWEEP_TABLE`).
    stream : file or None
        Where the table goes; None for ``sys.stdout``.
    progress : bool or None
        Show a progress bar on stderr: True, False, or None for "when stderr is a terminal".
    """

    def __init__(self, *, table: Table = SWEEP_TABLE, stream: IO[str] | None = None, progress: bool | None = None):
        self.table = table
        self.stream = stream if stream is not None else sys.stdout
        self.progress = progress
        self._bar = None

    def _print(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(text, file=self.stream)  # clears and redraws the bar around the line
        else:
            print(text, file=self.stream)
        self.stream.flush()

    def start(self, meta: dict, total: int) -> None:
        """Print the header; open the progress bar for ``total`` rows."""
        self._print(self.table.header(meta))
        if self.progress is not False:
            try:
                from tqdm import tqdm  # text bar on stderr (tqdm.auto would put a widget in notebooks)
            except ImportError:  # tqdm is optional: no bar
                return
            # disable=None: tqdm shows the bar only if stderr is a terminal.
            self._bar = tqdm(total=total, unit="size", file=sys.stderr, leave=False,
                             disable=None if self.progress is None else False, desc="sweep")

    def row(self, record: dict) -> None:
        """Print one finished record."""
        self._print(self.table.row(record))
        if self._bar is not None:
            self._bar.update(1)

    def finish(self, results: list[dict], out: str | os.PathLike | None = None) -> None:
        """Print the footer (and where the results file is)."""
        self.close()
        self._print(self.table.footer(results) + (f"\n# Results file       : {out}" if out else ""))

    def close(self) -> None:
        """Close the progress bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
