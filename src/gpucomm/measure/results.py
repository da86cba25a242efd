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

    collective, msg_bytes, count, dtype, op, num_ranks, iters, warmup_iters,
    time_s            time of one operation, the maximum over ranks
    algbw_bytes_per_s msg_bytes / time_s
    busbw_bytes_per_s algbw * busbw_factor(collective, num_ranks)
    num_wrong         wrong elements summed over ranks (None when the check is off)

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

import json
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from gpucomm import GpucommError
from gpucomm.model.units import format_size, to_gb_per_s

#: Version of the results-file layout (the ``schema`` field of every metadata record).
SCHEMA_VERSION = 1


class Results(list):
    """A list of result records (dicts) with the run's metadata record in :attr:`meta`.

    Attributes
    ----------
    meta : dict
        The metadata record (empty if none was found).
    """

    def __init__(self, records: Iterable[dict] = (), meta: dict | None = None):
        super().__init__(records)
        self.meta = dict(meta or {})


class SweepResults(Results):
    """The per-size result records of a collective sweep, with the run's metadata in :attr:`meta`."""

    @property
    def num_wrong(self) -> int:
        """Wrong elements over all sizes (sizes run without the check count 0)."""
        return sum(r.get("num_wrong") or 0 for r in self)

    @property
    def ok(self) -> bool:
        """True when every checked size has zero wrong elements."""
        return self.num_wrong == 0

    def __repr__(self) -> str:
        return f"SweepResults({len(self)} sizes, num_wrong={self.num_wrong}, meta keys={sorted(self.meta)})"


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
    """

    title: str
    unit: str
    width: int
    cell: Callable[[dict], str]


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
        """The comment lines and the two lines of column titles printed before the first row."""
        lines = list(self.comments(meta))
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


def _sweep_comments(meta: dict) -> list[str]:
    m = meta.get
    lines = [
        f"# gpucomm.measure {m('collective', '?')}: {m('num_ranks', '?')} ranks, backend {m('backend', '?')}, "
        f"{m('dtype', '?')} {m('op', '?')}, {format_size(m('min_bytes', 0))} to {format_size(m('max_bytes', 0))} "
        f"step x{m('step_factor', '?')}, iters {m('iters', '?')}"
        + (f" x {m('blocks')} blocks" if m("blocks", 1) > 1 else "") + ", "
        f"warm-up {m('warmup_iters', '?')}, check {int(bool(m('check', 0)))}",
    ]
    if meta.get("backend_note"):
        lines.append(f"# {meta['backend_note']}")
    for rank, (host, device) in enumerate(zip(meta.get("rank_hosts", []), meta.get("devices", []))):
        lines.append(f"#  rank {rank:3d} on {host}: {device}")
    if meta.get("timing_note"):
        lines.append(f"# {meta['timing_note']}")
    median = ", median of blocks" if m("blocks", 1) > 1 else ""
    lines.append(f"# time: one operation, the maximum over ranks{median}; GB/s = 1e9 B/s; "
                 f"busbw = algbw * {m('busbw_factor', '?')} (nccl-tests doc/PERFORMANCE.md)")
    return lines


def _sweep_summary(records: list[dict]) -> list[str]:
    """Wrong elements and the average busbw, as nccl-tests ends its output."""
    checked = [r for r in records if r.get("num_wrong") is not None]
    wrong = sum(r["num_wrong"] for r in checked)
    status = "N/A (check off)" if not checked else ("OK" if wrong == 0 else "FAILED")
    avg = sum(r["busbw_bytes_per_s"] for r in records) / len(records) if records else 0.0
    return [f"# Wrong elements     : {wrong} {status}",
            f"# Avg bus bandwidth  : {to_gb_per_s(avg):.4g} GB/s over {len(records)} sizes"]


#: The collective sweep's table (the columns of nccl-tests' ``all_reduce_perf``, out-of-place only).
SWEEP_TABLE = Table(
    columns=(
        Column("size", "(B)", 12, lambda r: str(r["msg_bytes"])),
        Column("count", "(elements)", 13, lambda r: str(r["count"])),
        Column("type", "", 9, lambda r: r["dtype"]),
        Column("redop", "", 6, lambda r: r["op"]),
        Column("time", "(us)", 10, lambda r: format_time_us(r["time_s"])),
        Column("algbw", "(GB/s)", 8, lambda r: f"{to_gb_per_s(r['algbw_bytes_per_s']):.2f}"),
        Column("busbw", "(GB/s)", 8, lambda r: f"{to_gb_per_s(r['busbw_bytes_per_s']):.2f}"),
        Column("#wrong", "", 7, lambda r: "N/A" if r.get("num_wrong") is None else str(r["num_wrong"])),
    ),
    comments=_sweep_comments,
    summary=_sweep_summary,
    mark=lambda r: "  WRONG" if r.get("num_wrong") else "",
)


def format_header(meta: dict) -> str:
    """The sweep table's comment lines and column titles, printed before the first row."""
    return SWEEP_TABLE.header(meta)


def format_row(record: dict) -> str:
    """One sweep table row for a result record; a row with wrong elements ends in ``WRONG``."""
    return SWEEP_TABLE.row(record)


def format_footer(records: list[dict]) -> str:
    """Summary lines after the last row: wrong elements and the average busbw (as nccl-tests)."""
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


class ResultsWriter:
    """Write records as JSON lines, each flushed and synced to disk before returning.

    Parameters
    ----------
    path : str or Path
        The results file; created (with its folder), or truncated if it exists.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file: IO[str] | None = open(self.path, "w", encoding="utf-8")
        except OSError as exc:
            raise GpucommError(f"results file {str(self.path)!r} cannot be written: {exc.strerror}") from None

    def write(self, record: dict) -> None:
        """Append one record and ``os.fsync`` it, so a crash after this call keeps it."""
        if self._file is None:
            raise GpucommError(f"results file {self.path} is already closed")
        # One write call per line: an interruption leaves whole lines, or at worst a
        # truncated last line, which read_results skips.
        self._file.write(json.dumps(record, sort_keys=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file (idempotent); every record written is already on disk."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_results(path: str | os.PathLike) -> SweepResults:
    """Read a results file (also one cut short).

    Parameters
    ----------
    path : str or Path
        A JSON-lines file from ``gpucomm bench --out`` or ``run_sweep(out=...)``; also
        ``gpucomm copybw --out`` (:func:`gpucomm.measure.copy_bandwidth.read_copy_results`
        gives its records their methods) and ``run_tp_layer(out=...)``.

    Returns
    -------
    SweepResults
        Every record but the metadata, in file order, with the metadata record in ``.meta``.

    Raises
    ------
    GpucommError
        If the file is missing or a complete line is not a JSON object. A last line
        without its newline (a write cut by a kill) is skipped.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GpucommError(f"results file {str(path)!r} cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise GpucommError(f"results file {str(path)!r} is not text: expected JSON lines written by gpucomm bench "
                           "or gpucomm parse") from None
    lines = text.split("\n")
    if lines and lines[-1] != "":
        lines = lines[:-1]  # truncated by an interruption mid-write
    meta: dict = {}
    records: list[dict] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GpucommError(f"results file {str(path)!r} line {number} is not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise GpucommError(f"results file {str(path)!r} line {number} is not a JSON object")
        if record.get("record") == "meta":
            meta = record
        else:
            records.append(record)
    return SweepResults(records, meta)
